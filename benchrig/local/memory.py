"""Memory figures of the embedded model: this process's resident memory, and the size of the
KV cache llama.cpp allocates for a context window."""

from __future__ import annotations

import os
from typing import Any

KV_BYTES_PER_VALUE = 2  # llama.cpp stores K and V as f16 unless told otherwise
KV_SOURCE = ("llama.cpp model dimensions: n_layer × n_ctx × n_head_kv × head_dim × 2 (K and "
             "V) × 2 bytes (f16, llama.cpp's default cache type)")


def rss_bytes() -> int | None:
    """This process's resident set size, from /proc (None where there is no /proc)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def kv_cache_bytes(llm: Any) -> int | None:
    """The KV cache llama.cpp allocated for `llm`'s window (what its load log reports as
    `llama_kv_cache: size`): every cell of n_ctx, used or not."""
    import llama_cpp

    model = llm._model.model
    heads = llama_cpp.llama_model_n_head(model)
    if heads <= 0:
        return None
    head_dim = llama_cpp.llama_model_n_embd(model) // heads
    return int(llama_cpp.llama_model_n_layer(model) * llm.n_ctx()
               * llama_cpp.llama_model_n_head_kv(model) * head_dim * 2 * KV_BYTES_PER_VALUE)


def trained_context(llm: Any) -> int | None:
    """The context the model was trained with (GGUF `<arch>.context_length`)."""
    import llama_cpp

    value = int(llama_cpp.llama_model_n_ctx_train(llm._model.model))
    return value if value > 0 else None
