#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (Python 3.11, Node 20, root).
#   bash scripts/setup.sh            venv + Node 22 + conformance runner + test AS + redis-server
#                                    + nginx + tmux (a component that cannot be installed fails set-up)
#   bash scripts/setup.sh --python   venv only (what `scripts/test.sh --fast` needs)
# Quick when already done: each step keeps a stamp of the inputs it was built from.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

python_only=0
[[ "${1:-}" == "--python" ]] && python_only=1

say() { printf 'setup: %s\n' "$*" >&2; }

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

setup_venv() {
  if [[ ! -x .venv/bin/python ]]; then
    local py
    py="$(command -v python3.11 || command -v python3)"
    say "creating .venv with $py"
    "$py" -m venv .venv
  fi
  local want stamp=.venv/.rondo-pyproject.sha256
  want="$(hash_of pyproject.toml)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && .venv/bin/python -c 'import rondo' 2>/dev/null; then
    return
  fi
  say "installing rondo-mcp[dev] into .venv (pyproject.toml changed or first run)"
  # The distribution was called `rondo` before (a name PyPI gives to another project): drop an
  # old editable install of it (and its metadata next to the sources) so one distribution
  # owns the package.
  .venv/bin/python -m pip uninstall -q -y rondo >/dev/null 2>&1 || true
  rm -rf src/rondo.egg-info
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
  echo "$want" >"$stamp"
}

setup_node() {
  if "$RONDO_NODE_BIN/node" --version 2>/dev/null | grep -q '^v22\.'; then
    return
  fi
  command -v npm >/dev/null || { say "npm not found: install Node 20+ first"; return 1; }
  say "installing Node 22 into .cache/node (npm package node@22)"
  mkdir -p .cache/node
  # The node package's preinstall pulls the platform binary from the npm registry.
  npm install --prefix .cache/node --no-audit --no-fund --loglevel=error node@22 >/dev/null
  "$RONDO_NODE_BIN/node" --version | grep -q '^v22\.' || { say "Node 22 install failed"; return 1; }
}

setup_conformance() {
  local dir=.cache/conformance want stamp
  want="$(hash_of conformance/package.json conformance/package-lock.json)"
  stamp="$dir/.lock.sha256"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$RONDO_CONFORMANCE" ]]; then
    return
  fi
  say "installing the pinned conformance runner into $dir"
  mkdir -p "$dir"
  cp conformance/package.json conformance/package-lock.json "$dir/"
  (cd "$dir" && PATH="$RONDO_NODE_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" >"$stamp"
}

setup_authserver() {
  # The real authorization server the auth tests start (oauth2-mock-server, pinned).
  local dir=tests/authserver want stamp
  want="$(hash_of "$dir/package.json" "$dir/package-lock.json")"
  stamp="$dir/node_modules/.lock.sha256"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    say "installing the pinned test authorization server into $dir/node_modules"
    (cd "$dir" && PATH="$RONDO_NODE_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$want" >"$stamp"
  fi
}

setup_interop_node() {
  # The pinned official TypeScript SDK peers: the auth end-to-end test (integration tier) needs
  # them before interop/run.sh runs. Same stamp as interop/run.sh, so neither installs twice.
  local want stamp=interop/node_modules/.lock.sha256
  want="$(hash_of interop/package.json interop/package-lock.json)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return
  fi
  say "installing the pinned TypeScript SDK peers into interop/node_modules"
  (cd interop && PATH="$RONDO_NODE_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" >"$stamp"
}

setup_openapi_peers() {
  # Real OpenAPI documents nobody here wrote (GitHub's REST description, @octokit/openapi,
  # pinned): tests/openapi/test_openapi_github.py and benchmarks/openapi_build.py read them.
  local dir=tests/peers/openapi want stamp
  want="$(hash_of "$dir/package.json" "$dir/package-lock.json")"
  stamp="$dir/node_modules/.lock.sha256"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    say "installing the pinned OpenAPI documents into $dir/node_modules"
    (cd "$dir" && PATH="$RONDO_NODE_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$want" >"$stamp"
  fi
}

setup_mcp_sdk_peer() {
  # The official Python SDK, pinned, in a venv of its own (never rondo's): an old-style
  # 2024-11-05 HTTP+SSE server for tests/gateway/test_gateway_sse.py. Same venv and pin as
  # interop/run.sh, which also uses it.
  local venv=.cache/interop-mcp-venv pin=2.3.0
  if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != sys.argv[1])' "$pin" 2>/dev/null; then
    say "installing mcp==$pin into $venv"
    rm -rf "$venv"
    "$(command -v python3.11 || command -v python3)" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "mcp==$pin"
  fi
}

setup_browser_peer() {
  # The pinned playwright-core that drives Debian's Chromium through `rondo dev`'s page
  # (tests/cli/test_cli_dev_browser.py); it downloads no browser of its own.
  local dir=tests/peers/browser want stamp
  want="$(hash_of "$dir/package.json" "$dir/package-lock.json")"
  stamp="$dir/node_modules/.lock.sha256"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    say "installing the pinned playwright-core into $dir/node_modules"
    (cd "$dir" && PATH="$RONDO_NODE_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$want" >"$stamp"
  fi
}

setup_apps_peer() {
  # MCP Apps: the pinned official @modelcontextprotocol/ext-apps, bundled by esbuild (pinned, its
  # binary shipped inside an npm package) into the host bridge `rondo dev --apps-bridge` serves
  # and the view script the browser test's views inline (tests/cli/test_cli_dev_apps_browser.py).
  local dir=tests/peers/apps want stamp
  want="$(hash_of "$dir/package.json" "$dir/package-lock.json" "$dir/build.mjs")"
  stamp="$dir/node_modules/.lock.sha256"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" || ! -f "$dir/dist/ext-apps-host.js" ]]; then
    say "installing the pinned ext-apps into $dir/node_modules and bundling it into $dir/dist"
    (cd "$dir" && PATH="$RONDO_NODE_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null &&
      PATH="$RONDO_NODE_BIN:$PATH" node build.mjs)
    echo "$want" >"$stamp"
  fi
}

# Debian packages the integration tier starts on loopback ports (tests/helpers/fleet_parts.py,
# tests/helpers/redis_server.py). A missing or broken one fails set-up, CI or not: tests must not go
# quiet because an install failed. Only `--python` (the fast tier) skips them.
component_works() {  # binary version-flag
  local path
  path="$(command -v "$1" || { [[ -x "/usr/sbin/$1" ]] && echo "/usr/sbin/$1"; })" || return 1
  [[ -n "$path" ]] && "$path" "$2" >/dev/null 2>&1
}

apt_install() {  # binary version-flag package [fallback-package]
  local binary="$1" flag="$2"; shift 2
  component_works "$binary" "$flag" && return 0
  say "$binary missing or broken: installing $1 with apt-get"
  apt_updated="${apt_updated:-0}"
  if (( ! apt_updated )); then
    apt-get update -qq || say "WARNING: apt-get update failed"
    apt_updated=1
  fi
  local pkg
  for pkg in "$@"; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall "$pkg" >/dev/null 2>&1 && break
  done
  # The Debian packages may start system services; tests start their own instances.
  if ! component_works "$binary" "$flag"; then
    say "ERROR: could not install $binary (apt-get install -y $*); the integration tier needs it"
    return 1
  fi
}

setup_redis() { apt_install redis-server --version redis-server; }
setup_oidcserver() {
  # The real OpenID provider the facade's live tests put upstream (oidc-provider, pinned).
  local dir=tests/oidcserver want stamp
  want="$(hash_of "$dir/package.json" "$dir/package-lock.json")"
  stamp="$dir/node_modules/.lock.sha256"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    say "installing the pinned test OpenID provider into $dir/node_modules"
    (cd "$dir" && PATH="$RONDO_NODE_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$want" >"$stamp"
  fi
}

setup_nginx() { apt_install nginx -v nginx-light nginx; }
# The `rondo call` sign-in test drives a real terminal.
setup_tmux() { apt_install tmux -V tmux; }
# `rondo dev`'s browser test: Debian's Chromium, headless.
setup_chromium() { apt_install chromium --version chromium; }

setup_venv
if (( ! python_only )); then
  setup_node
  setup_conformance
  setup_authserver
  setup_oidcserver
  setup_interop_node
  setup_openapi_peers
  setup_mcp_sdk_peer
  setup_redis
  setup_nginx
  setup_tmux
  setup_chromium
  setup_browser_peer
  setup_apps_peer
fi
