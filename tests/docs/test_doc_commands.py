"""docs/gateway.md's shell blocks stay true: every `rondo proxy` / `rondo gateway` line in a
```bash block parses with that command's own parser, and the flags it passes on parse with
`rondo run`'s, as the CLI hands them over. Nothing is started (the commands themselves are run
by tests/gateway and tests/cli)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from rondo.cli import gateway, proxy
from rondo.fleet import run

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```bash\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PARSERS = {"proxy": proxy.parser, "gateway": gateway.parser}
LINES = [line for block in BLOCK.findall((ROOT / "docs" / "gateway.md").read_text())
         for line in block.splitlines() if line.strip()]


def test_the_page_shows_both_commands() -> None:
    assert any("--" in line for line in LINES)  # some line carries flags to check
    assert {shlex.split(line, comments=True)[1] for line in LINES} == set(PARSERS)


@pytest.mark.parametrize("line", LINES)
def test_each_documented_command_line_parses(line: str) -> None:
    words = shlex.split(line, comments=True)
    assert words[0] == "rondo", line
    args, rest = PARSERS[words[1]]().parse_known_args(words[2:])
    served = run.parser().parse_args(["app.py:server", *rest])  # exits 2 on an unknown flag
    flags = [word[2:].partition("=")[0].replace("-", "_") for word in words if word.startswith("--")]
    for flag in flags:  # each documented flag landed in one of the two parsers, with a value
        assert getattr(args, flag, None) or getattr(served, flag, None), (flag, line)
    assert args.upstream if words[1] == "proxy" else args.config  # the positional is read
