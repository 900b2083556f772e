"""Docs stay true: every ```python block in docs/**/*.md and README.md is a file, and every such file runs.

A block's first line must be `# file: <path>` (relative to the repository root) and the block
must equal that file's content exactly (up to trailing newlines). Each referenced file is then
run with the test interpreter from the repository root and must exit 0 within 60 s.

Exiting 0 proves little by itself, so every snippet must check what it shows: it asserts its
outcome, or it is a server (`if __name__ == "__main__":`) that a test below starts over stdio
with `rondo.Client` and calls, comparing the answer with what the page says.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1].parent
HEADER = re.compile(r"^# file: (\S+)\s*$")
OPEN = re.compile(r"^(\s*)```(?:python|py)\s*$")
RUN_TIMEOUT = 60


@dataclass(frozen=True)
class Block:
    doc: str  # repository-relative markdown path
    line: int  # 1-based line of the opening fence
    text: str

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def target(self) -> str | None:
        first = self.text.split("\n", 1)[0]
        match = HEADER.match(first)
        return match.group(1) if match else None


def python_blocks(markdown: Path, root: Path = ROOT) -> list[Block]:
    """Every fenced python block, with its indentation (e.g. inside a list item) removed."""
    blocks: list[Block] = []
    lines = markdown.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opened = OPEN.match(lines[i])
        if not opened:
            i += 1
            continue
        indent, start = opened.group(1), i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
        doc = markdown.relative_to(root).as_posix()
        blocks.append(Block(doc, start + 1, "\n".join(body) + "\n"))
        i += 1
    return blocks


def all_blocks() -> list[Block]:
    docs = sorted((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").is_dir() else []
    docs.append(ROOT / "README.md")
    return [block for doc in docs for block in python_blocks(doc)]


BLOCKS = all_blocks()
TARGETS = sorted({b.target for b in BLOCKS if b.target})


def test_every_python_block_names_its_file():
    unnamed = [b.where for b in BLOCKS if b.target is None]
    assert not unnamed, (
        "python blocks must start with '# file: docs/snippets/<name>.py' "
        f"(and equal that file): {unnamed}"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_block_equals_its_file(target: str):
    path = ROOT / target
    assert path.is_file(), f"{target} is referenced by a docs block but does not exist"
    content = path.read_text(encoding="utf-8").rstrip("\n")
    blocks = [b for b in BLOCKS if b.target == target]
    assert blocks  # TARGETS come from the blocks: at least one names this file
    for block in blocks:
        assert block.text.rstrip("\n") == content, (
            f"the block at {block.where} differs from {target}: copy the file into the block "
            "(or the block into the file) so they match exactly"
        )


@pytest.mark.parametrize("target", TARGETS)
def test_snippet_runs(target: str):
    path = ROOT / target
    assert path.is_file(), f"{target} does not exist"
    try:
        done = subprocess.run(
            [sys.executable, str(path)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{target} did not finish within {RUN_TIMEOUT} s; output so far: {exc.stdout}")
    assert done.returncode == 0, (
        f"{target} exited {done.returncode}\n--- stdout\n{done.stdout[-2000:]}"
        f"\n--- stderr\n{done.stderr[-4000:]}"
    )


# Server snippets (they serve when run as a script): the call each page documents, and its answer.
SERVED = {
    "docs/snippets/readme_quickstart.py": ("favorite_color", {"user": "Ada"}, "Ada likes teal."),
    "docs/snippets/server_first.py": ("greet", {"name": "Ada"}, "Hello, Ada!"),
    "docs/snippets/gateway_upstream.py": ("add", {"a": 2, "b": 3}, "5"),
}
ASSERTS = re.compile(r"^\s*(assert\b|raise AssertionError\b)", re.M)


@pytest.mark.parametrize("target", TARGETS)
def test_snippet_checks_its_outcome(target: str):
    text = (ROOT / target).read_text(encoding="utf-8")
    if target in SERVED:
        assert 'if __name__ == "__main__":' in text, f"{target} is listed as a server snippet"
        return
    assert ASSERTS.search(text), (
        f"{target} checks nothing: assert the outcome it documents (a wrong answer must fail "
        "the docs test), or list it in SERVED with the call and answer the page shows"
    )


@pytest.mark.parametrize("target", sorted(SERVED))
def test_server_snippet_answers_as_documented(target: str):
    from rondo.client import Client

    tool, arguments, expected = SERVED[target]

    def user(request):  # the README's question, answered the way its text says
        return {"action": "accept", "content": {"color": "teal"}}

    async def main() -> str:
        async with Client([sys.executable, str(ROOT / target)], on_elicit=user, cwd=ROOT) as client:
            assert tool in [t.name for t in await client.list_tools()]
            return (await client.call_tool(tool, arguments)).text

    assert asyncio.run(asyncio.wait_for(main(), RUN_TIMEOUT)) == expected


def test_block_parser_reads_indented_blocks_and_headers(tmp_path: Path):
    """The parser itself: a self-check so a parser bug cannot make the real checks vacuous."""
    sample = (
        "Intro\n\n```python\n# file: docs/snippets/a.py\nprint(1)\n```\n\n"
        "- item\n\n  ```py\n  x = 1\n  ```\n\n```bash\necho no\n```\n"
    )
    fake = tmp_path / "docs" / "x.md"
    fake.parent.mkdir()
    fake.write_text(sample)
    blocks = python_blocks(fake, root=tmp_path)
    assert [b.target for b in blocks] == ["docs/snippets/a.py", None]
    assert blocks[0].text == "# file: docs/snippets/a.py\nprint(1)\n"
    assert blocks[1].text == "x = 1\n"
    assert blocks[1].where == "docs/x.md:10"
