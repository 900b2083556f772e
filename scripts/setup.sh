#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (Python 3.11, Node 20, root).
#   bash scripts/setup.sh            venv + Node 22 + conformance runner + test AS + redis-server
#                                    + nginx + tmux
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
  say "installing rondo[dev] into .venv (pyproject.toml changed or first run)"
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

# Debian packages the integration tier starts on loopback ports (tests/fleet_parts.py,
# tests/redis_server.py). Under CI (CI=true) a failed install fails the set-up; elsewhere it warns
# and the tests that need the binary fail, naming it.
apt_install() {  # binary package [fallback-package]
  local binary="$1"; shift
  command -v "$binary" >/dev/null || [[ -x "/usr/sbin/$binary" ]] && return 0
  say "$binary not found: installing $1 with apt-get"
  local pkg ok=0
  apt_updated="${apt_updated:-0}"
  if (( ! apt_updated )); then
    apt-get update -qq || say "WARNING: apt-get update failed"
    apt_updated=1
  fi
  for pkg in "$@"; do
    if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null; then ok=1; break; fi
  done
  if (( ! ok )); then
    if [[ "${CI:-}" == "true" ]]; then
      say "ERROR: could not install $binary ($*)"
      return 1
    fi
    say "WARNING: could not install $binary; the tests that need it will fail"
  fi
  # The Debian packages may start system services; tests start their own instances.
  return 0
}

setup_authserver() {
  # The real authorization server the auth tests start (oauth2-mock-server, pinned).
  local dir=tests/authserver want stamp
  want="$(hash_of "$dir/package.json" "$dir/package-lock.json")"
  stamp="$dir/node_modules/.lock.sha256"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return
  fi
  say "installing the pinned test authorization server into $dir/node_modules"
  (cd "$dir" && PATH="$RONDO_NODE_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" >"$stamp"
}

setup_redis() { apt_install redis-server redis-server; }
# The `rondo call` sign-in test drives a real terminal.
setup_tmux() { apt_install tmux tmux; }
setup_nginx() { apt_install nginx nginx-light nginx; }

setup_venv
if (( ! python_only )); then
  setup_node
  setup_conformance
  setup_authserver
  setup_redis
  setup_nginx
  setup_tmux
fi
