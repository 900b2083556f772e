#!/usr/bin/env bash
# Instructions per op of one in-process path, under callgrind (load-independent, unlike time):
#   bash benchmarks/instructions.sh rondo add      # or: floor|rondo  add|leg1|leg2|flow|stdio
# Runs benchmarks/inprocess.py with 100 and 300 ops (5 rounds each, after the same warm-up) and
# prints the difference per op, so start-up and warm-up cancel out. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:?floor|rondo}"; path="${2:?add|leg1|leg2|flow|stdio}"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install -y valgrind)" >&2; exit 1; }
out="$(mktemp -d)"; trap 'rm -rf "$out"' EXIT
count() {
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" .venv/bin/python \
    benchmarks/inprocess.py "$which" "$path" "$1" 2>&1 | grep -o "Collected : [0-9]*" | grep -o "[0-9]*"
}
a=$(count 100); b=$(count 300)
echo "$which $path: $(( (b - a) / 1000 )) instructions per op"
