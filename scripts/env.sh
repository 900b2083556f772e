# Shared paths for the scripts (sourced, not run). Puts the cached Node 22 first on PATH.
RONDO_ROOT="${RONDO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
RONDO_NODE_BIN="$RONDO_ROOT/.cache/node/node_modules/node/bin"
RONDO_CONFORMANCE="${RONDO_CONFORMANCE:-$RONDO_ROOT/.cache/conformance/node_modules/.bin/conformance}"  # tests put a stand-in here
RONDO_PY="$RONDO_ROOT/.venv/bin/python"
export PATH="$RONDO_NODE_BIN:$PATH"
export RONDO_ROOT RONDO_NODE_BIN RONDO_CONFORMANCE RONDO_PY
