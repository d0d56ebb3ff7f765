#!/usr/bin/env bash
# scripts/run.sh <task> <model> [agent] [provider] — one attempt, one result file.
# Exit 0 on pass/no-test, 1 on fail/error, 2 on usage or a bad task.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 4 ]; then
  echo "usage: scripts/run.sh <task> <model> [agent] [provider]" >&2
  echo "  e.g. scripts/run.sh lru-cache smollm2 llamacpp" >&2
  echo "       scripts/run.sh lru-cache smollm2 pi local" >&2
  echo "       scripts/run.sh lru-cache oracle replay path/to/answer.md" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$root/.venv/bin/python"
[ -x "$python" ] || python="$(command -v python3)"
args=(--task "$1" --model "$2")
[ $# -ge 3 ] && args+=(--agent "$3")
[ $# -ge 4 ] && args+=(--provider "$4")
exec "$python" "$root/scripts/runner.py" "${args[@]}"
