"""The MCP Inspector's CLI (@modelcontextprotocol/inspector 2.12.0, pinned in
interop/package.json) reads rondo's MCP Apps views: tests/helpers/apps_server.py over HTTP,
`--method tools/list` (the tools' `_meta.ui` link, nested and flat, and the app-only
visibility), `resources/list` and `resources/read --uri ui://orders/table` (the view's MIME
type, HTML and `_meta.ui` on listing and content), each compared with the fixture.

    .venv/bin/python interop/inspector_apps_check.py --node PATH
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from harness import free_port, inspector, wait

ROOT = Path(__file__).resolve().parent.parent
PYTHON = os.environ.get("RONDO_PY", str(ROOT / ".venv" / "bin" / "python"))
VIEW = "ui://orders/table"
MIME = "text/html;profile=mcp-app"
UI = {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--node", default="node")
    node = parser.parse_args().node
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen([PYTHON, str(ROOT / "tests/helpers/apps_server.py"), "--port", str(port)],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(url, proc)
        tools = {t["name"]: t for t in inspector(node, url, "--method", "tools/list")["tools"]}
        assert tools["orders"]["_meta"] == {"ui": {"resourceUri": VIEW}, "ui/resourceUri": VIEW}, tools
        assert tools["confirm"]["_meta"]["ui"] == {"resourceUri": VIEW, "visibility": ["app"]}
        print("ok tools/list: orders links the view (nested and flat), confirm is app-only")
        listed = [r for r in inspector(node, url, "--method", "resources/list")["resources"]
                  if r["uri"] == VIEW]
        assert len(listed) == 1 and listed[0]["mimeType"] == MIME, listed
        assert listed[0]["_meta"]["ui"] == UI, listed
        print("ok resources/list: the view with its MIME type and _meta.ui")
        [item] = inspector(node, url, "--method", "resources/read", "--uri", VIEW)["contents"]
        assert item["mimeType"] == MIME and item["text"].startswith("<!doctype html>"), item
        assert item["_meta"]["ui"] == UI, item
        print("ok resources/read: the HTML as text/html;profile=mcp-app, _meta.ui on the content")
    finally:
        proc.terminate()
        proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
