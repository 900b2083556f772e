#!/usr/bin/env bash
# Set up the venv (quick when done) and run the demo example.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh --python
exec .venv/bin/python examples/preferences.py "$@"
