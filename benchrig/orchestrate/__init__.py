"""One attempt run: the runner and matrix, a window ladder, a conversation, a remote worker."""
