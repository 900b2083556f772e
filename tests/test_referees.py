"""Referees of the suite itself (issue 37): a `pytest.raises(ValueError)` (or TypeError) without
`match=` passes on any such error, including one raised for another reason than the test is
about."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def unmatched_raises(source: str, types: frozenset[str] = frozenset({"ValueError", "TypeError"})) -> list[int]:
    """Lines of `pytest.raises(T)` calls, T in `types`, that give no `match=`."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "raises" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "pytest" and node.args
                and isinstance(node.args[0], ast.Name) and node.args[0].id in types
                and not any(k.arg == "match" for k in node.keywords)):
            lines.append(node.lineno)
    return lines


def test_every_pytest_raises_value_or_type_error_names_the_message() -> None:
    found = {str(p.relative_to(TESTS)): lines for p in sorted(TESTS.rglob("test_*.py"))
             if (lines := unmatched_raises(p.read_text()))}
    assert found == {}


def test_the_checker_sees_a_bare_raises_and_accepts_a_matched_one() -> None:
    bare = "import pytest\nwith pytest.raises(ValueError):\n    int('x')\n"
    matched = "import pytest\nwith pytest.raises(ValueError, match='invalid literal'):\n    int('x')\n"
    other = "import pytest\nwith pytest.raises(KeyError):\n    {}['x']\n"
    assert unmatched_raises(bare) == [2]
    assert unmatched_raises(matched) == [] and unmatched_raises(other) == []
