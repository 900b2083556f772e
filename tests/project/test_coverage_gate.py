"""scripts/coverage_gate.py: the per-module floor of `scripts/test.sh --coverage`.

Everything here runs in subprocesses without COVERAGE_PROCESS_START: creating a second
`coverage.Coverage` inside a measured process stops that process's own data from being saved
(the whole unit tier's measurement was lost that way)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts Python processes

ROOT = Path(__file__).resolve().parents[1].parent
SRC = ROOT / "src" / "rondo"

# A run that executed every line of wire/era.py, half of wire/meta.py and nothing else; also
# prints which modules have no statement at all (the gate lists only modules with some).
BUILD = """
import json, sys
from pathlib import Path
import coverage
root, out = Path(sys.argv[1]), sys.argv[2]
src = root / "src" / "rondo"
cov = coverage.Coverage(data_file=None, config_file=str(root / "pyproject.toml"))
def statements(path):
    return sorted(cov.analysis2(str(path))[1])
era, meta = src / "wire" / "era.py", src / "wire" / "meta.py"
half = statements(meta)[: len(statements(meta)) // 2]
data = coverage.CoverageData(basename=out)
data.add_lines({str(era): statements(era), str(meta): half})
data.write()
print(json.dumps(sorted(p.relative_to(src.parent).as_posix() for p in src.rglob("*.py")
                        if not statements(p))))
"""


def unmeasured_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("COVERAGE_PROCESS_START", "COVERAGE_FILE")}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, set[str]]:
    data_file = str(tmp_path_factory.mktemp("gate") / "cov")
    out = subprocess.run([sys.executable, "-c", BUILD, str(ROOT), data_file], env=unmeasured_env(),
                         capture_output=True, text=True, check=True, timeout=120)
    return data_file, set(json.loads(out.stdout))


def gate(data_file: str, floor: str) -> tuple[int, list[str]]:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "coverage_gate.py"), data_file, floor],
                          env=unmeasured_env(), capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout.splitlines()


@pytest.fixture(scope="module")
def report(built: tuple[str, set[str]]) -> tuple[int, list[str]]:
    return gate(built[0], "90")


@pytest.fixture(scope="module")
def rows(report: tuple[int, list[str]]) -> dict[str, tuple[int, int]]:
    table = {}
    for line in report[1]:
        parts = line.split()
        if parts and parts[0].startswith("rondo/"):
            table[parts[0]] = (int(parts[1]), int(parts[2]))
    return table


def test_rows_count_what_ran_and_a_module_never_imported_is_all_missed(
    rows: dict[str, tuple[int, int]],
) -> None:
    stmts, miss = rows["rondo/wire/era.py"]
    assert stmts > 0 and miss == 0
    stmts, miss = rows["rondo/wire/meta.py"]
    assert miss == stmts - stmts // 2
    stmts, miss = rows["rondo/cli/call.py"]  # not in the data at all: 0%, not left out
    assert stmts > 0 and miss == stmts


def test_modules_the_config_omits_are_left_out_and_only_those(
    rows: dict[str, tuple[int, int]], built: tuple[str, set[str]],
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
    assert left_out - omitted <= built[1]


def test_the_gate_fails_under_the_floor_and_passes_at_it(
    report: tuple[int, list[str]], rows: dict[str, tuple[int, int]], built: tuple[str, set[str]],
) -> None:
    rc, lines = report
    assert rc == 1
    assert any(line.startswith("rondo/cli/call.py") and line.endswith("< 90%") for line in lines)
    assert lines[-1] == f"coverage: 1/{len(rows)} modules at or above 90%"  # era.py alone
    rc, lines = gate(built[0], "0")
    assert rc == 0 and lines[-1] == f"coverage: {len(rows)}/{len(rows)} modules at or above 0%"
