#!/usr/bin/env bash
# Run the official conformance runner against conformance/server.py for one requirement set.
#   bash conformance/run-server.sh 2026-07-28 [--scored-extension SCENARIO]...
# Starts the fixture on a free loopback port, runs every scenario the revision requires (plus
# the not-scored ones), then judges the results with conformance/summarize.py (strict: warnings,
# pending and extension scenarios must pass, stale baseline entries fail; only the scenarios
# named in PLACEHOLDERS below, which the runner ships checking nothing yet, may SKIP).
# --scored-extension SCENARIO (repeatable) also runs an extension scenario the requirement set
# does not name (the skills extension's sep-2640-*), at this revision, and scores it: it must
# pass, and a scenario whose every check is SKIPPED fails.
# --through-proxy runs the same scenarios against `rondo proxy http://.../mcp --http PORT` in
# front of the fixture instead (docs/gateway.md), judged against
# conformance/expected-failures-proxy-REQ.yaml, results in results/proxy-REQ.
# --bridge hold|replay (implies --through-proxy) starts the proxy with `--upstream-protocol
# 2025-11-25 --bridge MODE`: the fixture is then a legacy upstream whose questions reach the
# runner through the legacy bridge. With --only PREFIX, only the scenarios of the requirement
# set whose names start with PREFIX run (each with --scenario) and are judged; the bridge lanes
# run the `input-required-result-` ones, judged against expected-failures-bridge-REQ.yaml,
# results in results/bridge-MODE-REQ.
set -uo pipefail
REQ="${1:?usage: conformance/run-server.sh REQUIREMENTS (e.g. 2026-07-28) [--scored-extension SCENARIO]...}"
shift
EXTRA=()
PROXY=0
BRIDGE=""
ONLY=""
while (( $# )); do
  case "$1" in
    --through-proxy) PROXY=1; shift ;;
    --bridge) [[ "${2:-}" == hold || "${2:-}" == replay ]] || { echo "conformance: --bridge needs hold or replay" >&2; exit 2; }
              BRIDGE="$2"; PROXY=1; shift 2 ;;
    --only) [[ -n "${2:-}" ]] || { echo "conformance: --only needs a scenario name prefix" >&2; exit 2; }
            ONLY="$2"; shift 2 ;;
    --scored-extension) [[ -n "${2:-}" ]] || { echo "conformance: --scored-extension needs a scenario" >&2; exit 2; }
                        EXTRA+=("$2"); shift 2 ;;
    *) echo "conformance: unknown option $1" >&2; exit 2 ;;
  esac
done
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh

EXPECTED="conformance/expected-failures-server-$REQ.yaml"
OUT="results/server-$REQ"
if (( PROXY )); then
  EXPECTED="conformance/expected-failures-proxy-$REQ.yaml"
  OUT="results/proxy-$REQ"
fi
PROXY_ARGS=()
if [[ -n "$BRIDGE" ]]; then
  EXPECTED="conformance/expected-failures-bridge-$REQ.yaml"
  OUT="results/bridge-$BRIDGE-$REQ"
  PROXY_ARGS=(--upstream-protocol 2025-11-25 --bridge "$BRIDGE")
fi
REQUIREMENTS="$(dirname "$RONDO_CONFORMANCE")/../@modelcontextprotocol/conformance/requirements/$REQ.yaml"
# The runner's own placeholders (their run() returns one SKIPPED check), per requirement set.
# summarize.py fails a named one that starts checking something, so this list cannot go stale.
case "$REQ" in
  2026-07-28) PLACEHOLDERS=(tasks-status-notifications) ;;
  *) PLACEHOLDERS=() ;;
esac
# Through the proxy, a relayed call is answered as JSON: the 2025-11-25 SSE polling scenario
# (pending, not scored) finds no stream to check and skips; named so it fails once it checks.
if (( PROXY )) && [[ "$REQ" == 2025-11-25 ]]; then PLACEHOLDERS+=(server-sse-polling); fi
if [[ -n "$ONLY" ]]; then
  kept=()
  for name in "${PLACEHOLDERS[@]}"; do [[ "$name" == "$ONLY"* ]] && kept+=("$name"); done
  PLACEHOLDERS=("${kept[@]}")
fi
[[ -f conformance/server.py ]] || { echo "conformance: conformance/server.py is missing" >&2; exit 1; }
[[ -x "$RONDO_CONFORMANCE" ]] || { echo "conformance: runner missing, run scripts/setup.sh" >&2; exit 1; }
[[ -f "$EXPECTED" ]] || { echo "conformance: $EXPECTED is missing" >&2; exit 1; }

rm -rf "$OUT" && mkdir -p "$OUT"
PORT="$("$RONDO_PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"

"$RONDO_PY" conformance/server.py --port "$PORT" >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
PROXY_PID=""
stop_server() {
  [[ -n "$PROXY_PID" ]] && kill "$PROXY_PID" 2>/dev/null && wait "$PROXY_PID" 2>/dev/null
  kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  return 0
}
trap stop_server EXIT

# Ready when it answers an HTTP request (any status) on /mcp: a conformant server/discover.
READY_PY="$(cat <<'PY'
import json, os, sys, time, urllib.error, urllib.request
port, pid = int(sys.argv[1]), int(sys.argv[2])
body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("server exited before answering")
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", body, headers)
        urllib.request.urlopen(req, timeout=2).read()
        sys.exit(0)
    except urllib.error.HTTPError:
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit("server did not answer within 20 s")
PY
)"
if ! "$RONDO_PY" -c "$READY_PY" "$PORT" "$SERVER_PID"; then
  echo "conformance: server failed to start; log:" >&2
  tail -n 30 "$OUT/server.log" >&2
  exit 1
fi
if (( PROXY )); then
  UPSTREAM_PORT="$PORT"
  PORT="$("$RONDO_PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  # The runner calls the proxy as localhost: allow that Host as the fixture does.
  "$RONDO_ROOT/.venv/bin/rondo" proxy "http://127.0.0.1:$UPSTREAM_PORT/mcp" --http "127.0.0.1:$PORT" \
    "${PROXY_ARGS[@]}" >"$OUT/proxy.log" 2>&1 &
  PROXY_PID=$!
  if ! "$RONDO_PY" -c "$READY_PY" "$PORT" "$PROXY_PID"; then
    echo "conformance: rondo proxy failed to start; log:" >&2
    tail -n 30 "$OUT/proxy.log" >&2
    exit 1
  fi
fi

"$RONDO_PY" -c 'import sys; print(f"conformance: runner against http://localhost:{sys.argv[1]}/mcp, requirements {sys.argv[2]} (log: {sys.argv[3]})")' "$PORT" "$REQ" "$OUT/runner.log"
if [[ -n "$ONLY" ]]; then
  # The scored and not-scored scenarios of the set whose names start with the prefix, one run each.
  mapfile -t SELECTED < <("$RONDO_PY" conformance/summarize.py --list "$REQUIREMENTS" --only "$ONLY")
  (( ${#SELECTED[@]} )) || { echo "conformance: no scenario of $REQ starts with $ONLY" >&2; exit 1; }
  runner_rc=0
  for scenario in "${SELECTED[@]}"; do
    "$RONDO_CONFORMANCE" server --url "http://localhost:$PORT/mcp" --scenario "$scenario" \
      --spec-version "$REQ" -o "$OUT" >>"$OUT/runner.log" 2>&1 || runner_rc=1
  done
  # A failing scenario makes the runner exit 1: summarize.py is the judge here.
  runner_rc=0
else
  "$RONDO_CONFORMANCE" server --url "http://localhost:$PORT/mcp" --requirements "$REQ" \
    -o "$OUT" --expected-failures "$EXPECTED" >"$OUT/runner.log" 2>&1
  runner_rc=$?
fi

scored_args=()
for scenario in "${EXTRA[@]}"; do
  # --force: extension scenarios are off the spec timeline (the runner would skip them).
  if ! "$RONDO_CONFORMANCE" server --url "http://localhost:$PORT/mcp" --scenario "$scenario" \
       --spec-version "$REQ" --force -o "$OUT" >>"$OUT/runner-extensions.log" 2>&1; then
    echo "conformance: extension scenario $scenario reported failures (see $OUT/runner-extensions.log)"
  fi
  scored_args+=(--scored-extension "$scenario")
done

"$RONDO_PY" conformance/summarize.py "$OUT" "$EXPECTED" "${scored_args[@]}" \
  ${PLACEHOLDERS[@]/#/--placeholder=} ${ONLY:+--only "$ONLY"} \
  --requirements "$REQUIREMENTS"
summary_rc=$?

if (( runner_rc != 0 )); then
  echo "conformance: the runner itself exited $runner_rc (see $OUT/runner.log)"
  tail -n 15 "$OUT/runner.log"
fi
(( runner_rc == 0 && summary_rc == 0 ))
