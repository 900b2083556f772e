"""`rondo.paths.inside`: a template value becomes a path under its base, or is refused.

Issue 37 defect 8: `{+path}` may legally hold `/etc/passwd` (`tree:///data//etc/passwd` or
`%2fetc%2fpasswd`), and `os.path.join(base, value)` then leaves the base. These tests hold the
helper to its rule, on hostile tables, on generated values and through a served template.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rondo
from rondo.paths import MAX_LENGTH, PathRefused, inside
from rondo.testing import connect

HOSTILE = [
    ("/etc/passwd", "absolute"),
    ("\\Windows\\win.ini", "absolute"),
    ("C:\\Windows\\win.ini", "drive"),
    ("C:Windows", "drive"),
    ("c:/x", "drive"),
    ("notes.txt:secret", "stream"),
    ("..", "'..'"),
    ("../etc/passwd", "'..'"),
    ("a/../../etc/passwd", "'..'"),
    ("a\\..\\..\\etc", "'..'"),
    ("a/b/..", "'..'"),
    ("a\x00.txt", "control"),
    ("a\nb", "control"),
    ("a\x85b", "control"),
    ("", "empty"),
    ("a/" * (MAX_LENGTH // 2 + 1), "longer"),
    ("x" * 256, "segment"),
    ("\u00e9" * 128, "segment"),  # 128 characters, 256 UTF-8 bytes
]


@pytest.mark.parametrize(("value", "why"), HOSTILE)
def test_hostile_values_are_refused(tmp_path: Path, value: str, why: str) -> None:
    with pytest.raises(PathRefused, match="path refused") as caught:
        inside(tmp_path, value)
    assert why.split()[0].strip("'") in caught.value.reason
    assert caught.value.code == -32602 and caught.value.message == "Resource not found"


@pytest.mark.parametrize("value", ["a.txt", "dir/a.txt", "dir\\a.txt", "./a", "a//b", "..a",
                                   "a..", "%2e%2e", "x" * 255, "\u00e9" * 127])
def test_ordinary_values_stay_below_the_base(tmp_path: Path, value: str) -> None:
    path = inside(tmp_path, value)
    assert tmp_path.resolve() in path.parents


def test_the_old_join_escapes_and_inside_does_not(tmp_path: Path) -> None:
    # What the issue saw: the plain join hands back the absolute value.
    assert os.path.join(tmp_path, "/etc/passwd") == "/etc/passwd"
    with pytest.raises(PathRefused, match="absolute"):
        inside(tmp_path, "/etc/passwd")


def test_a_symbolic_link_out_of_the_base_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (tmp_path / "secret").write_text("s")
    (base / "out").symlink_to(tmp_path)
    with pytest.raises(PathRefused, match="outside the base"):
        inside(base, "out/secret")
    (base / "in").mkdir()
    (base / "here").symlink_to(base / "in")
    assert inside(base, "here/x") == (base / "in" / "x").resolve()


@given(st.text(max_size=80))
def test_any_value_is_refused_or_below_the_base(value: str) -> None:
    base = Path("/srv/data")  # never touched: resolve() of a missing path is lexical
    try:
        path = inside(base, value)
    except PathRefused:
        return
    assert path == base or base in path.parents


@given(st.lists(st.sampled_from(["a", "..", ".", "", "/", "\\", "C:", "\x00", "b"]),
                max_size=12))
def test_generated_traversals_never_leave(parts: list[str]) -> None:
    base = Path("/srv/data")
    try:
        path = inside(base, "/".join(parts))
    except PathRefused:
        return
    assert path == base or base in path.parents


def test_a_served_template_never_reads_outside(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hi")
    server = rondo.Server("files", state=None)

    @server.resource("tree:///data/{+path}")
    def read(path: str) -> str:
        return inside(tmp_path, path).read_text()

    conn = connect(server)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}

    async def read_uri(uri: str) -> dict:
        answer = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                                  "params": {"uri": uri, "_meta": meta}})
        assert answer is not None
        return answer

    async def main() -> None:
        ok = await read_uri("tree:///data/hello.txt")
        assert ok["result"]["contents"][0]["text"] == "hi"
        for uri in ("tree:///data//etc/passwd", "tree:///data/%2fetc%2fpasswd",
                    "tree:///data/C:%5cWindows%5cwin.ini", "tree:///data/a%00b"):
            refused = await read_uri(uri)
            assert refused["error"]["code"] == -32602, uri
            assert refused["error"]["message"] == "Resource not found", uri

    asyncio.run(main())
