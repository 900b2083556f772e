#!/usr/bin/env bash
# Benchmarks, side by side: rondo vs the official mcp SDK and fastmcp (see benchmarks/README.md).
#   bash scripts/bench.sh [run.py options, e.g. --targets rondo,mcp --duration 3]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh --python
if ! command -v wrk >/dev/null; then
  echo "bench: installing wrk with apt-get" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
exec .venv/bin/python benchmarks/run.py "$@"
