#!/usr/bin/env bash
# Every interop check against the official SDK peers (pinned versions); non-zero on any failure.
#   bash interop/run.sh
# Installs what it needs, once per lock change: interop/node_modules with `npm ci --ignore-scripts`
# (@modelcontextprotocol/client and /server 2.4.0, /node 2.1.2, /ext-tasks 0.2.2, /ext-apps 2.0.4, zod, the Inspector
# CLI mcpdo from @modelcontextprotocol/inspector 2.12.0, which needs Node >= 22.19), and mcp==2.3.0 in its own
# venv at .cache/interop-mcp-venv (never in rondo's); for the gateway peers, server-everything
# (interop/everything/) and fastmcp==4.1.6 (.cache/interop-fastmcp-venv). Node: the cached Node 22 from
# scripts/setup.sh when present, else any Node >= 20 on PATH.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh

MCP_PIN="mcp==2.3.0"
MCP_VENV="$ROOT/.cache/interop-mcp-venv"
say() { printf 'interop: %s\n' "$*"; }
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

command -v node >/dev/null || { say "node not found (run scripts/setup.sh)"; exit 1; }
[[ -x "$RONDO_PY" ]] || { say "$RONDO_PY missing (run scripts/setup.sh)"; exit 1; }

want="$(hash_of interop/package.json interop/package-lock.json)"
stamp=interop/node_modules/.lock.sha256
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  say "npm ci --ignore-scripts in interop/"
  (cd interop && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) || { say "npm ci failed"; exit 1; }
  echo "$want" >"$stamp"
fi

if ! "$MCP_VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != sys.argv[1])' "${MCP_PIN#mcp==}" 2>/dev/null; then
  say "installing $MCP_PIN into $MCP_VENV"
  rm -rf "$MCP_VENV"
  "$(command -v python3.11 || command -v python3)" -m venv "$MCP_VENV" &&
    "$MCP_VENV/bin/python" -m pip install -q --disable-pip-version-check "$MCP_PIN" || { say "pip install $MCP_PIN failed"; exit 1; }
fi

# The gateway peers (interop/gateway_peers_check.py): server-everything pinned in its own
# interop/everything/package.json (its SDK 1.x tree apart from the 2.x peers), FastMCP pinned in
# its own venv at .cache/interop-fastmcp-venv (never in rondo's).
FASTMCP_PIN="fastmcp==4.1.6"
FASTMCP_VENV="$ROOT/.cache/interop-fastmcp-venv"
want="$(hash_of interop/everything/package.json interop/everything/package-lock.json)"
stamp=interop/everything/node_modules/.lock.sha256
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  say "npm ci --ignore-scripts in interop/everything/"
  (cd interop/everything && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) || { say "npm ci (everything) failed"; exit 1; }
  echo "$want" >"$stamp"
fi
if ! "$FASTMCP_VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("fastmcp") != sys.argv[1])' "${FASTMCP_PIN#fastmcp==}" 2>/dev/null; then
  say "installing $FASTMCP_PIN into $FASTMCP_VENV"
  rm -rf "$FASTMCP_VENV"
  "$(command -v python3.11 || command -v python3)" -m venv "$FASTMCP_VENV" &&
    "$FASTMCP_VENV/bin/python" -m pip install -q --disable-pip-version-check "$FASTMCP_PIN" || { say "pip install $FASTMCP_PIN failed"; exit 1; }
fi

passed=0
failed=0
check() {  # name command...
  local name="$1"; shift
  local log="$ROOT/results/interop-${name}.log"
  mkdir -p "$ROOT/results"
  if timeout 300 "$@" >"$log" 2>&1 </dev/null; then
    passed=$((passed + 1)); say "PASS $name ($(grep -c '^ok ' "$log") checks)"
  else
    failed=$((failed + 1)); say "FAIL $name (log: $log)"; grep -vE '^ok |rondo.state:' "$log" | tail -n 20
  fi
}

check ts-client-modern node interop/ts_client_check.mjs
check ts-client-legacy node interop/legacy_preferences.mjs
check rondo-client-ts-server "$RONDO_PY" interop/rondo_client_check.py --node "$(command -v node)"
check python-mcp-client "$MCP_VENV/bin/python" interop/python_mcp_check.py --era modern
check python-mcp-client-legacy "$MCP_VENV/bin/python" interop/python_mcp_check.py --era legacy
check mcpdo-modern "$RONDO_PY" interop/mcpdo_check.py --era modern
check mcpdo-legacy "$RONDO_PY" interop/mcpdo_check.py --era legacy
# needs the test authorization server in tests/authserver (scripts/setup.sh installs it)
check rondo-client-ts-protected "$RONDO_PY" interop/rondo_client_auth_check.py --node "$(command -v node)"
check ext-tasks-client node interop/ts_tasks_client_check.mjs
check rondo-client-ext-tasks-server "$RONDO_PY" interop/rondo_tasks_check.py --node "$(command -v node)"
# rondo.openapi tools from a real FastAPI app on a two-worker fleet; a confirmed DELETE's rounds
# land on different workers
check ts-openapi-fleet node interop/ts_openapi_fleet_check.mjs

# the skills extension: the official TypeScript SkillsClient (2.4.0's ./ext/skills) on both eras,
# and the Inspector CLI listing the same skills
check ts-skills-client node interop/ts_skills_client_check.mjs
check inspector-skills "$RONDO_PY" interop/inspector_skills_check.py --node "$(command -v node)"

# rondo proxy in front of upstreams nobody here wrote (server-everything, an official Python SDK
# server, a FastMCP server), walked by the TS client, the Python client, mcpdo and rondo.Client
# on both downstream eras
check gateway-peers "$RONDO_PY" interop/gateway_peers_check.py
# server-everything's interactive tools (they ask mid-call) through `rondo proxy --bridge hold`
# and `--bridge replay`, walked by rondo.Client and the official TypeScript client on both
# downstream eras
check bridge-everything "$RONDO_PY" interop/bridge_everything_check.py

# MCP Apps: the official TypeScript client with ext-apps 2.0.4's constants and schemas reading
# rondo's views on both eras, and the Inspector CLI reading the same views
check ts-apps-client node interop/ts_apps_client_check.mjs
check inspector-apps "$RONDO_PY" interop/inspector_apps_check.py --node "$(command -v node)"
# and rondo's client half reading views from a server built with ext-apps' registerAppTool
check rondo-client-ts-apps-server "$RONDO_PY" interop/rondo_apps_check.py --node "$(command -v node)"
# the server rondo dev hosts in Chromium (tests/cli/test_cli_dev_apps_browser.py), read and driven
# by the official TypeScript client on both eras (the view's asking call included) and the Inspector
# CLI; its view inlines the ext-apps App bundle scripts/setup.sh builds in tests/peers/apps
check ts-apps-host-server node interop/ts_apps_host_check.mjs

echo "interop: $passed passed, $failed failed"
(( failed == 0 ))
