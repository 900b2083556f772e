"""The MCP Inspector's CLI (@modelcontextprotocol/inspector 2.12.0, pinned in
interop/package.json) lists rondo's skills: conformance/server.py over HTTP, `--method
skills/list`, `skills/get` and `resources/directory/read`, each answer compared with the fixture.

    .venv/bin/python interop/inspector_skills_check.py --node PATH
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
PDF = "skill://pdf-processing/SKILL.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--node", default="node")
    node = parser.parse_args().node
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen([PYTHON, str(ROOT / "conformance/server.py"), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(url, proc)
        listing = inspector(node, url, "--method", "skills/list")
        by_uri = {entry["uri"]: entry for entry in listing["skills"]}
        assert sorted(by_uri) == [PDF, "skill://release-notes/SKILL.md"], sorted(by_uri)
        files = [r["uri"] for r in by_uri[PDF]["resources"]]
        assert files == [PDF, "skill://pdf-processing/references/FORMS.md",
                         "skill://pdf-processing/scripts/extract.py"], files
        assert all(r["digest"].startswith("sha256:") for r in by_uri[PDF]["resources"])
        print(f"ok skills/list: {len(by_uri)} skills, {len(files)} files in pdf-processing")
        got = inspector(node, url, "--method", "skills/get", "--uri", PDF)
        assert got["skill"] == by_uri[PDF]
        print("ok skills/get: the same entry as the listing")
        top = inspector(node, url, "--method", "resources/directory/read", "--uri", "skill://pdf-processing")
        dirs = sorted(r["uri"] for r in top["resources"] if r.get("mimeType") == "inode/directory")
        assert dirs == ["skill://pdf-processing/references", "skill://pdf-processing/scripts"], dirs
        print("ok resources/directory/read: both subdirectories as inode/directory")
    finally:
        proc.terminate()
        proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
