"""docs/apps.md's JavaScript (the Vite project of its bundler section, the host bridge's build)
stays true: each ```js block is a file (its first line names it: under docs/snippets/, or
tests/peers/apps/build.mjs, which scripts/setup.sh runs), equal to it, and parses as an ES
module in Node. The Python blocks are run by tests/docs/test_docs.py; the Vite build itself
is not run (rondo's tests do not install Vite: see the page's limits). The page's ```json
block is the `_meta` a linked tool sends."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers.components import binary

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```js\n(.*?)^```$", re.MULTILINE | re.DOTALL)
HEADER = re.compile(r"^// file: (\S+)\n")
BLOCKS = BLOCK.findall((ROOT / "docs" / "apps.md").read_text())


def test_the_page_has_its_javascript_blocks() -> None:
    assert len(BLOCKS) == 3


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.split("\n", 1)[0])
def test_each_javascript_block_is_its_file_and_parses(block: str, tmp_path: Path) -> None:
    header = HEADER.match(block)
    assert header is not None, "a ```js block must start with // file: <path>"
    path = ROOT / header.group(1)
    assert path.read_text() == block
    module = tmp_path / "block.mjs"
    module.write_text(block)
    checked = subprocess.run([binary("node", "nodejs"), "--check", str(module)], capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stderr


def test_the_pages_json_block_is_the_meta_a_linked_tool_sends() -> None:
    import json

    import rondo
    from rondo.apps import EXTENSION, MIME_TYPE, Apps
    from tests.helpers.helpers_core import Client as Raw

    [block] = re.findall(r"^```json\n(.*?)^```$", (ROOT / "docs" / "apps.md").read_text(),
                         re.MULTILINE | re.DOTALL)
    server = rondo.Server("apps-doc")
    apps = server.extension(Apps())
    table = apps.view("ui://orders/table", html="<!doctype html><p>orders</p>")

    @apps.tool(view=table)
    def orders() -> str:
        return "none open"

    raw = Raw(server, caps={"extensions": {EXTENSION: {"mimeTypes": [MIME_TYPE]}}})
    [tool] = raw.result("tools/list")["tools"]
    assert tool["_meta"] == json.loads(block)
