#!/usr/bin/env bash
# Instructions and simulated L1 cache misses per request of a whole HTTP server (uvicorn, uvloop,
# httptools and the app; the kernel is not counted), under cachegrind:
#   bash benchmarks/server_instructions.sh rondo add     # floor|floor_sealed|floor_minseal|server_clear_state|server_minseal|rondo|proxy|floor_proxy  add|flow
# `proxy` counts `rondo proxy` (one worker, as bench_proxy.py runs it) in front of
# benchmarks/server.py, which runs outside valgrind: the proxy's own instructions per call;
# `floor_proxy` counts benchmarks/floor_proxy.py (a relay with no MCP work) in the same place.
# Serves the fixture under valgrind twice, sends it 100 and then 600 requests (or flows) one
# after another on one keep-alive connection (benchmarks/sequential.py), and prints the difference
# per request, so start-up and shut-down cancel out. Unlike inprocess.py this includes
# everything a real request runs between two answers. Needs valgrind; takes about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:?floor|floor_sealed|floor_minseal|server_clear_state|server_minseal|rondo|proxy|floor_proxy}"; what="${2:?add|flow}"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install -y valgrind)" >&2; exit 1; }
out="$(mktemp -d)"; trap 'rm -rf "$out"' EXIT
port=$(.venv/bin/python -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
[ "$which" = rondo ] && which=server
served=(.venv/bin/python "benchmarks/$which.py" http "$port")
if [ "$which" = proxy ] || [ "$which" = floor_proxy ]; then
  up=$(.venv/bin/python -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
  .venv/bin/python benchmarks/server.py http "$up" >"$out/upstream.log" 2>&1 &
  upstream=$!
  trap 'kill "$upstream" 2>/dev/null; rm -rf "$out"' EXIT
  export RONDO_STATE_KEYS="bench:$(printf 'A%.0s' $(seq 43))"
  served=(.venv/bin/python -m rondo.cli proxy "http://127.0.0.1:$up/mcp" --http "127.0.0.1:$port")
  [ "$which" = floor_proxy ] && served=(.venv/bin/python benchmarks/floor_proxy.py http "$port" "$up")
fi
summary() {
  valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file="$out/cg.$1" \
    "${served[@]}" >"$out/server.$1.log" 2>&1 &
  local pid=$!
  .venv/bin/python benchmarks/sequential.py "$port" "$1" "$what"
  kill -INT "$pid"; wait "$pid" || true
  grep "^summary" "$out/cg.$1"
}
a=$(summary 100); b=$(summary 600)
per=$([ "$what" = flow ] && echo 1000 || echo 500)  # requests between the two runs
.venv/bin/python - "$a" "$b" "$per" "${1}" "$what" <<'PY'
import sys
names = "Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw".split()
a, b = (dict(zip(names, map(int, s.split()[1:]))) for s in sys.argv[1:3])
per = int(sys.argv[3])
d = {k: (b[k] - a[k]) / per for k in names}
print(f"{sys.argv[4]} {sys.argv[5]}: {d['Ir'] / 1000:.1f}k instructions, "
      f"{d['I1mr']:.0f} L1 instruction misses, {d['D1mr'] + d['D1mw']:.0f} L1 data misses per request")
PY
