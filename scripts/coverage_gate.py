"""Per-module line coverage of src/rondo from a combined coverage run, and the floor it must meet.

    python scripts/coverage_gate.py .coverage-data/cov 90

Prints one line per module (statements, missed, percent) and exits 1 if any module is under the
floor, or if a module of src/rondo was never imported at all (it then has no data: 0%).
Modules the coverage config omits (`[tool.coverage.run] omit`, each with its reason) are left out.
"""

from __future__ import annotations

import sys
from fnmatch import fnmatch
from pathlib import Path

import coverage

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "rondo"


def table(data_file: str) -> list[tuple[str, int, int]]:
    """(module path, statements, missed) for every .py file under src/rondo, imported or not."""
    cov = coverage.Coverage(data_file=data_file, config_file=str(ROOT / "pyproject.toml"))
    cov.load()
    measured = {Path(f).resolve() for f in cov.get_data().measured_files()}
    omit = [*(cov.config.run_omit or []), *(cov.config.report_omit or [])]
    rows = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(fnmatch(path.as_posix(), pattern) for pattern in omit):
            continue
        _, statements, _, missing, _ = cov.analysis2(str(path))
        if not statements:
            continue
        if path.resolve() not in measured:
            missing = statements
        rows.append((path.relative_to(ROOT / "src").as_posix(), len(statements), len(missing)))
    return rows


def main(argv: list[str]) -> int:
    data_file, floor = argv[0], float(argv[1])
    rows = table(data_file)
    under = []
    total_stmts = sum(r[1] for r in rows)
    total_miss = sum(r[2] for r in rows)
    print(f"{'module':44} {'stmts':>6} {'miss':>5} {'cover':>6}")
    for name, stmts, miss in rows:
        pct = 100.0 * (stmts - miss) / stmts
        flag = "" if pct >= floor else f"  < {floor:g}%"
        if flag:
            under.append(name)
        print(f"{name:44} {stmts:6} {miss:5} {pct:5.1f}%{flag}")
    print(f"{'TOTAL':44} {total_stmts:6} {total_miss:5} "
          f"{100.0 * (total_stmts - total_miss) / max(total_stmts, 1):5.1f}%")
    print(f"coverage: {len(rows) - len(under)}/{len(rows)} modules at or above {floor:g}%")
    return 1 if under else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
