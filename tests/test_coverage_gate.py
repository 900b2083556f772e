"""scripts/coverage_gate.py: the per-module floor of `scripts/test.sh --coverage`."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import coverage
import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "rondo"


def load_gate():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("coverage_gate", ROOT / "scripts" / "coverage_gate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ANALYSER = coverage.Coverage(data_file=None, config_file=str(ROOT / "pyproject.toml"))


def statements(path: Path) -> set[int]:
    return set(ANALYSER.analysis2(str(path))[1])


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A run that executed every line of wire/era.py, half of wire/meta.py and nothing else."""
    tmp_path = tmp_path_factory.mktemp("gate")
    era, meta = SRC / "wire" / "era.py", SRC / "wire" / "meta.py"
    half = sorted(statements(meta))[: len(statements(meta)) // 2]
    data = coverage.CoverageData(basename=str(tmp_path / "cov"))
    data.add_lines({str(era): sorted(statements(era)), str(meta): half})
    data.write()
    return str(tmp_path / "cov")


@pytest.fixture(scope="module")
def rows(data_file: str) -> dict[str, tuple[int, int]]:
    return {name: (stmts, miss) for name, stmts, miss in load_gate().table(data_file)}


def test_rows_count_what_ran_and_a_module_never_imported_is_all_missed(
    rows: dict[str, tuple[int, int]],
) -> None:
    stmts, miss = rows["rondo/wire/era.py"]
    assert stmts > 0 and miss == 0
    stmts, miss = rows["rondo/wire/meta.py"]
    assert miss == stmts - stmts // 2
    stmts, miss = rows["rondo/cli.py"]  # not in the data at all: 0%, not left out
    assert stmts > 0 and miss == stmts


def test_modules_the_config_omits_are_left_out_and_only_those(
    rows: dict[str, tuple[int, int]],
) -> None:
    omit = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["coverage"]["run"]["omit"]
    assert omit, "the test needs an omitted module to check"
    omitted = set()
    for pattern in omit:
        assert pattern.startswith("*/rondo/")
        assert (SRC.parent / pattern[2:]).is_file(), f"{pattern} omits nothing: drop it"
        omitted.add(pattern[2:])
    assert not omitted & set(rows)
    left_out = {p.relative_to(SRC.parent).as_posix() for p in SRC.rglob("*.py")} - set(rows)
    # Besides the omitted ones, only files without a statement (an empty __init__) are missing.
    assert all(not statements(SRC.parent / name) for name in left_out - omitted)


def test_the_gate_fails_under_the_floor_and_prints_every_module(
    rows: dict[str, tuple[int, int]], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = load_gate()
    monkeypatch.setattr(gate, "table", lambda _: [(n, s, m) for n, (s, m) in rows.items()])
    assert gate.main(["data", "90"]) == 1
    out = capsys.readouterr().out
    assert "rondo/cli.py" in out and "< 90%" in out
    assert out.splitlines()[-1] == f"coverage: 1/{len(rows)} modules at or above 90%"  # era.py
    assert gate.main(["data", "0"]) == 0
