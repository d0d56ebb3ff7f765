"""A Hugging Face tokenizer folder from a GGUF's own vocabulary, for peers that need one
offline (AIPerf's --tokenizer); run with a venv that has `gguf` and `tokenizers`:

    .bench-venvs/aiperf/bin/python bench/gguf_tokenizer.py MODEL.gguf OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(gguf_path: str, out: str) -> None:
    from gguf import GGUFReader  # type: ignore[import-not-found]
    from tokenizers import (  # type: ignore[import-not-found]
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
    )

    reader = GGUFReader(gguf_path)

    def strings(name: str) -> list[str]:
        found = reader.fields[name]
        return [bytes(found.parts[i]).decode("utf-8") for i in found.data]

    tokens, merges = strings("tokenizer.ggml.tokens"), strings("tokenizer.ggml.merges")
    bpe = models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                     merges=[tuple(m.split(" ", 1)) for m in merges])
    tokenizer = Tokenizer(bpe)
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 8192}))
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    print(f"{len(tokens)} tokens → {folder}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
