#!/bin/bash
# Every summary format, view and filter, and compare (table, json), run from two trees over
# the same folders; the outputs (stdout, stderr, exit code) diffed. Empty diff: the same.
#   bench/summary_same.sh BEFORE_TREE AFTER_TREE OUT_DIR "FOLDER|A|B"...
# Each FOLDER|A|B is a results folder and the two sides compare takes (model or model@agent);
# each tree needs its .venv (a link to the main one does). Exit 1 when anything differs.
set -u
before=$1; after=$2; out=$3; shift 3
run_all() {  # tree, out dir
  local tree=$1 dir=$2; mkdir -p "$dir"
  run() { local name=$1; shift
    (cd "$tree" && .venv/bin/python -m benchrig.cli "$@" >"$dir/$name.out" 2>"$dir/$name.err"
     echo $? >"$dir/$name.rc"); }
  local n=0
  for set in "${SETS[@]}"; do
    IFS='|' read -r f a b <<<"$set"; n=$((n + 1))
    for fmt in table markdown csv json; do
      run $n-sum-$fmt summary "$f" --format $fmt
      run $n-only-$fmt summary "$f" --format $fmt --table-only
      run $n-task-$fmt summary "$f" --format $fmt --by task
      run $n-sample-$fmt summary "$f" --format $fmt --by sample
    done
    run $n-perattempt summary "$f" --format csv --per-attempt
    run $n-filt1 summary "$f" --suite reasoning --suite coding --format json
    run $n-filt2 summary "$f" --model smollm2 --driver ollama --since 2023-11-15
    run $n-filt3 summary "$f" --label example --format markdown
    run $n-filt4 summary "$f" --format csv --per-attempt --suite tool_use
    run $n-nomatch summary "$f" --model nosuchmodel
    run $n-cmp-table compare "$a" "$b" "$f"
    run $n-cmp-json compare "$a" "$b" "$f" --format json
    run $n-cmp-suite compare "$a" "$b" "$f" --suite reasoning --format json
  done
}
SETS=("$@")  # FOLDER|A|B each (a model name may hold a colon)
run_all "$before" "$out/before"
run_all "$after" "$out/after"
diff -r "$out/before" "$out/after" && echo "the same: $(ls "$out/after" | wc -l) outputs"
