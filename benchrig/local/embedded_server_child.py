"""The process `benchrig serve` starts: llama-cpp-python's OpenAI server, made fit to measure.

The same app as `python -m llama_cpp.server`, with the engine set up as the in-process
driver sets it (`logits_all` off: the server's default computes logits for every prompt
token, which slows prefill and leaves llama.cpp's prompt timer empty), and three changes:
- no prompt-prefix reuse between requests: llama-cpp-python keeps the previous request's
  tokens and skips the prefill of a shared prefix, so a repeated prompt would answer
  faster every time; here each request pays its own prefill, as in the in-process driver;
- llama.cpp's own counters (`llama_perf_context`) for every completion, with the number of
  tokens it generated (`completion_tokens`) and the process's memory (resident set before
  and after, the KV cache's size), kept by completion id and served at
  `GET /v1/benchrig/perf/{id}`;
- `GET /v1/benchrig/server`: the settings the server runs with (chat format, threads, …),
  so a client can record them;
- a request with `tools` answered by llama-cpp-python's function-calling handler
  (benchrig.local.function_calling), unstreamed, whatever the chat format.

    python -m benchrig.local.embedded_server_child '<ServerConfig-like JSON>'
"""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

KEEP = 256  # completions whose counters stay available


def instrument(perf: OrderedDict[str, dict[str, Any]]) -> None:
    """Wrap Llama._create_completion: reset before, record llama.cpp's counters after, and
    count the tokens generated for the completion as they are sampled."""
    import llama_cpp

    from benchrig.local.memory import KV_SOURCE, kv_cache_bytes, rss_bytes
    from benchrig.local.model import perf_counters

    original = llama_cpp.Llama._create_completion

    def measured(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        self.reset()  # forget the previous prompt: no prefix reuse
        llama_cpp.llama_perf_context_reset(self._ctx.ctx)
        completion_id = None
        rss_before = rss_bytes()
        generated = self.benchrig_generated = [0]  # counted by generate_counted
        for chunk in original(self, *args, **kwargs):
            completion_id = completion_id or chunk.get("id")
            yield chunk
        if completion_id:
            # llama.cpp's n_eval counts tokens decoded: at a length stop the last one is
            # sampled but never decoded. The completion's own count is every token sampled
            # but the end-of-generation one (what the server's usage would say unstreamed).
            counters = {**perf_counters(self), "completion_tokens": generated[0],
                        "memory": {"source": "benchrig serve (the server's process)",
                                   "rss_before_bytes": rss_before, "rss_after_bytes": rss_bytes(),
                                   "kv_cache_bytes": kv_cache_bytes(self),
                                   "kv_cache_source": KV_SOURCE, "n_ctx": self.n_ctx(),
                                   "placement": "cpu"}}
            for key in (completion_id, f"chat{completion_id}"):  # chat ids add "chat"
                perf[key] = counters
            while len(perf) > KEEP:
                perf.popitem(last=False)

    setattr(llama_cpp.Llama, "_create_completion", measured)  # noqa: B010 (mypy: method)
    setattr(llama_cpp.Llama, "generate", counting(llama_cpp.Llama.generate))  # noqa: B010


def counting(generate: Any) -> Any:
    """Llama.generate, adding each token it yields that is not an end-of-generation token
    (the completion stops at those without keeping them) to the completion's count."""
    import llama_cpp

    def generate_counted(self: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
        generated = getattr(self, "benchrig_generated", None)
        for token in generate(self, *args, **kwargs):
            if generated is not None and not llama_cpp.llama_vocab_is_eog(self._model.vocab,
                                                                          token):
                generated[0] += 1
            yield token

    return generate_counted


def accept_tools() -> None:
    """A chat request with `tools` (tool_choice not `none`) goes through BenchRig's tool
    handler (benchrig.local.function_calling), answered unstreamed, whatever the server's chat
    format (a streamed request with tools is left to the chat format as it is)."""
    import llama_cpp

    from benchrig.local.function_calling import tool_completion

    original: Any = llama_cpp.Llama.create_chat_completion

    def with_tools(self: Any, messages: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        tools = kwargs.get("tools")
        if not tools or kwargs.get("tool_choice") == "none" or kwargs.get("stream") or args:
            return original(self, messages, *args, **kwargs)
        sampling = {k: kwargs[k] for k in ("top_k", "top_p", "min_p", "repeat_penalty")
                    if kwargs.get(k) is not None}
        if kwargs.get("seed") is not None:
            self.set_seed(kwargs["seed"])
        return tool_completion(self, list(messages), list(tools),
                               float(kwargs.get("temperature", 0.2)),
                               int(kwargs.get("max_tokens") or 256), sampling)

    setattr(llama_cpp.Llama, "create_chat_completion", with_tools)  # noqa: B010


def main(argv: list[str]) -> None:
    config = json.loads(argv[0])
    import uvicorn
    from fastapi import HTTPException
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    from benchrig.local import llamalog

    llamalog.install(show=True)  # its lines to this process's log, printable, never raw
    perf: OrderedDict[str, dict[str, Any]] = OrderedDict()
    instrument(perf)
    accept_tools()
    server = ServerSettings(host=config["host"], port=config["port"], interrupt_requests=False)
    model = ModelSettings(model=config["model_path"], model_alias=config["alias"],
                          n_ctx=config["context_size"], n_threads=config["threads"],
                          n_threads_batch=config["threads"], chat_format=config["chat_format"],
                          logits_all=False, verbose=False)
    app = create_app(server_settings=server, model_settings=[model])

    @app.get("/v1/benchrig/server")  # type: ignore[untyped-decorator]
    def settings() -> dict[str, Any]:
        return dict(config["settings"])

    @app.get("/v1/benchrig/perf/{completion_id}")  # type: ignore[untyped-decorator]
    def counters(completion_id: str) -> dict[str, Any]:
        found = perf.get(completion_id)
        if found is None:
            raise HTTPException(404, f"no counters for {completion_id}")
        return found

    uvicorn.run(app, host=config["host"], port=config["port"], log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
