#!/usr/bin/env bash
# The package stands alone: build the wheel and sdist (`python -m build`), install the wheel into
# a fresh venv outside the checkout, and serve a server from it over stdio with its own `rondo`.
#   bash scripts/package-check.sh     (scripts/test.sh runs it as the `package` lane)
# Fails if the distribution is not `rondo-mcp`, if the wheel misses a file the package needs at
# run time, or if it ships anything besides the `rondo` package.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
say() { printf 'package: %s\n' "$*" >&2; }

say "building wheel and sdist"
.venv/bin/python -m build --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1 || { tail -n 30 "$WORK/build.log"; exit 1; }
wheel=("$WORK"/dist/rondo_mcp-*.whl)
sdist=("$WORK"/dist/rondo_mcp-*.tar.gz)
[[ -f "${wheel[0]}" ]] || { say "no rondo_mcp wheel was built: $(ls "$WORK/dist")"; exit 1; }
[[ -f "${sdist[0]}" ]] || { say "no rondo_mcp sdist was built: $(ls "$WORK/dist")"; exit 1; }

# Only the package (and the dist-info) in the wheel: no tests, docs or examples.
.venv/bin/python - "${wheel[0]}" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
stray = [n for n in names if not n.startswith(("rondo/", "rondo_mcp-"))]
assert not stray, f"the wheel ships files outside the package: {stray[:10]}"
assert "rondo/py.typed" in names, "the wheel lacks rondo/py.typed"
PY

say "installing the wheel into a fresh venv"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --disable-pip-version-check "${wheel[0]}" >"$WORK/pip.log" 2>&1 \
  || { grep -v '^WARNING: Location' "$WORK/pip.log" | tail -n 30; exit 1; }

# A server file and a client run from a folder that is not the checkout, with the venv's rondo.
mkdir "$WORK/app"
cat >"$WORK/app/hello.py" <<'PY'
import rondo

server = rondo.Server("hello")


@server.tool
def greet(name: str) -> str:
    """Say hello."""
    return f"Hello, {name}!"
PY
cd "$WORK/app"
version="$("$WORK/venv/bin/rondo" --version)"
want="rondo-mcp $("$WORK/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("rondo-mcp"))')"
[[ "$version" == "$want" ]] || { say "rondo --version said ${version@Q}, expected ${want@Q}"; exit 1; }
"$WORK/venv/bin/python" -c "import rondo, sys; assert '$ROOT' not in rondo.__file__, rondo.__file__"
out="$(timeout 60 "$WORK/venv/bin/rondo" call "$WORK/venv/bin/rondo run hello.py" greet '{"name": "wheel"}')"
[[ "$out" == "Hello, wheel!" ]] || { say "the installed server answered ${out@Q}"; exit 1; }
say "ok: $(basename "${wheel[0]}") and $(basename "${sdist[0]}"); $version served a tool from the wheel"
