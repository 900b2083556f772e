"""Referees of the suite itself (issue 37): a `pytest.raises(E)` without `match=` passes on any E,
including one raised for another reason than the test is about, so every call names its message."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def unmatched_raises(source: str) -> list[int]:
    """Lines of `pytest.raises(...)` calls (any exception type) that give no `match=`."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "raises" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "pytest"
                and not any(k.arg == "match" for k in node.keywords)):
            lines.append(node.lineno)
    return lines


def test_every_pytest_raises_names_the_message() -> None:
    sources = sorted(TESTS.rglob("*.py"))
    assert len(sources) > 100  # the walk found the suite, not an empty folder
    found = {str(p.relative_to(TESTS)): lines for p in sources
             if "node_modules" not in p.parts and (lines := unmatched_raises(p.read_text()))}
    assert found == {}


def test_the_checker_sees_a_bare_raises_of_any_type_and_accepts_a_matched_one() -> None:
    bare = "import pytest\nwith pytest.raises(ValueError):\n    int('x')\n"
    bare_other = "import pytest\nwith pytest.raises(KeyError) as e:\n    {}['x']\n"
    bare_tuple = "import pytest\nwith pytest.raises((OSError, EOFError)):\n    pass\n"
    matched = "import pytest\nwith pytest.raises(ValueError, match='invalid literal'):\n    int('x')\n"
    matched_other = "import pytest\nwith pytest.raises(McpError, match='^x$') as info:\n    pass\n"
    assert unmatched_raises(bare) == [2]
    assert unmatched_raises(bare_other) == [2] and unmatched_raises(bare_tuple) == [2]
    assert unmatched_raises(matched) == [] and unmatched_raises(matched_other) == []
