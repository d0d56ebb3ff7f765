"""The embedded model: GGUF resolution, threads and llama.cpp's counters, and `serve`."""
