#!/usr/bin/env bash
# User-space instructions per relayed `add` on the proxy's upstream link, one layer, under
# callgrind (load-independent, unlike time; the kernel's share is not counted):
#   bash benchmarks/link_instructions.sh client      # or: pool|transport|client
# Runs benchmarks/upstream_link.py --only LAYER with 100 and 300 calls per round (5 rounds each,
# after the same warm-up) and prints the difference per call. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
layer="${1:?pool|transport|client}"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install -y valgrind)" >&2; exit 1; }
out="$(mktemp -d)"; trap 'rm -rf "$out"' EXIT
count() {
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" .venv/bin/python \
    benchmarks/upstream_link.py "$1" --only "$layer" 2>&1 | grep -o "Collected : [0-9]*" | grep -o "[0-9]*"
}
a=$(count 100); b=$(count 300)
echo "$layer: $(( (b - a) / 1000 )) instructions per call"
