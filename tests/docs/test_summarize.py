"""conformance/summarize.py judges runs strictly: the verdict for each kind of outcome."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1].parent
_spec = importlib.util.spec_from_file_location("summarize", ROOT / "conformance/summarize.py")
assert _spec and _spec.loader
summarize = importlib.util.module_from_spec(_spec)
sys.modules["summarize"] = summarize  # dataclasses look their module up there
_spec.loader.exec_module(summarize)

REQUIREMENTS = """\
# comment
server:
  - alpha
  - beta

client:
  - some-client-thing

not_scored:
  - scenario: pending-one
    leg: server
    reason: pending
    note: >-
      the reference fixture: cannot pass it yet
  - scenario: tasks-x
    leg: server
    reason: extension
  - scenario: client-only
    leg: client
    reason: extension
"""


def write_run(root: Path, statuses: dict[str, list[tuple[str, str]]], stamp: str) -> None:
    for scenario, checks in statuses.items():
        folder = root / f"server-{scenario}-{stamp}"
        folder.mkdir(parents=True)
        body = [{"id": cid, "status": st, "errorMessage": f"{cid} went {st}"} for cid, st in checks]
        (folder / "checks.json").write_text(json.dumps(body))


def judge(tmp_path: Path, statuses, expected: str = "server: []\n", placeholders: tuple[str, ...] = ()) -> int:
    tmp_path.mkdir(parents=True, exist_ok=True)
    req = tmp_path / "req.yaml"
    req.write_text(REQUIREMENTS)
    ef = tmp_path / "expected-failures-server-2026-07-28.yaml"
    ef.write_text(expected)
    results = tmp_path / "results"
    write_run(results, statuses, "2026-01-01T00-00-00-000Z")
    flags = [arg for name in placeholders for arg in ("--placeholder", name)]
    return summarize.main([str(results), str(ef), "--requirements", str(req), *flags])


ALL_PASS = {
    "alpha": [("a1", "SUCCESS"), ("wire-schema-valid", "SUCCESS")],
    "beta": [("b1", "SUCCESS"), ("b2", "INFO")],
    "pending-one": [("p1", "SUCCESS")],
    "tasks-x": [("t1", "SUCCESS")],
}


def test_requirements_parser_reads_scored_and_server_not_scored(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(REQUIREMENTS)
    parsed = summarize.parse_requirements(path)
    assert parsed.scored == ["alpha", "beta"]
    assert parsed.not_scored == {"pending-one": "pending", "tasks-x": "extension"}


def test_all_passing_is_ok(tmp_path, capsys):
    assert judge(tmp_path, ALL_PASS) == 0
    out = capsys.readouterr().out
    assert "scored: 2/2 passed" in out and "verdict: OK" in out


@pytest.mark.parametrize(
    ("scenario", "status", "verdict"),
    [
        ("alpha", "FAILURE", 1),
        ("alpha", "WARNING", 1),  # warnings fail, like the runner's baseline mode
        ("pending-one", "FAILURE", 1),  # pending scenarios must pass too
        ("pending-one", "WARNING", 1),
        ("tasks-x", "FAILURE", 1),  # the tasks extension is required here too
    ],
)
def test_failures_and_warnings(tmp_path, scenario, status, verdict):
    statuses = {**ALL_PASS, scenario: [("x1", status)]}
    assert judge(tmp_path, statuses) == verdict


def test_a_missing_scenario_fails_extension_or_not(tmp_path):
    assert judge(tmp_path / "a", {k: v for k, v in ALL_PASS.items() if k != "beta"}) == 1
    assert judge(tmp_path / "b", {k: v for k, v in ALL_PASS.items() if k != "tasks-x"}) == 1


def test_baselined_failures_pass_and_stale_entries_fail(tmp_path, capsys):
    failing = {**ALL_PASS, "alpha": [("a1", "FAILURE"), ("a2", "SUCCESS")]}
    assert judge(tmp_path / "whole", failing, "server:\n  - alpha\n") == 0
    assert judge(tmp_path / "check", failing, "server:\n  - alpha:a1  # why\n") == 0
    capsys.readouterr()
    assert judge(tmp_path / "other", failing, "server:\n  - alpha:a2\n") == 1
    out = capsys.readouterr().out
    assert "STALE alpha:a2" in out and "alpha:a1 FAILURE" in out
    assert judge(tmp_path / "stale", ALL_PASS, "server:\n  - beta\n") == 1
    assert judge(tmp_path / "unknown", ALL_PASS, "server:\n  - nowhere\n") == 1


def test_latest_run_of_a_scenario_wins(tmp_path):
    results = tmp_path / "results"
    write_run(results, {"alpha": [("a1", "FAILURE")]}, "2026-01-01T00-00-00-000Z")
    write_run(results, {"alpha": [("a1", "SUCCESS")]}, "2026-01-02T00-00-00-000Z")
    loaded = summarize.load_results(results)
    assert loaded["alpha"].status == "PASS"


def test_duplicate_check_ids_collapse_most_severe_first():
    scenario = summarize.Scenario(
        "s", [{"id": "x", "status": "WARNING"}, {"id": "x", "status": "FAILURE"}]
    )
    assert scenario.failing["x"]["status"] == "FAILURE"
    assert scenario.status == "FAIL"


@pytest.mark.parametrize("checks", [[("s1", "SKIPPED")], [("s1", "SKIPPED"), ("i1", "INFO")], []])
def test_a_scenario_that_checked_nothing_is_skipped_not_passed(checks):
    scenario = summarize.Scenario("s", [{"id": c, "status": st} for c, st in checks])
    assert scenario.status == "SKIP"


def test_a_named_placeholder_that_checks_nothing_is_reported_as_skipped(tmp_path, capsys):
    statuses = {**ALL_PASS, "tasks-x": [("t1", "SKIPPED"), ("t2", "INFO")]}
    assert judge(tmp_path, statuses, placeholders=("tasks-x",)) == 0  # the runner's placeholder
    out = capsys.readouterr().out
    assert "SKIP  tasks-x" in out
    assert "not scored, required here: 1/2 passed, 0 with warnings, 0 failing, 1 skipped" in out
    assert "placeholders (may skip): tasks-x" in out


def test_an_extension_scenario_that_checks_nothing_fails_unless_named(tmp_path, capsys):
    # Before: every scenario whose reason was `extension` could pass all-SKIPPED.
    statuses = {**ALL_PASS, "tasks-x": [("t1", "SKIPPED"), ("t2", "INFO")]}
    assert judge(tmp_path / "unnamed", statuses) == 1
    assert "tasks-x: skipped (no check succeeded)" in capsys.readouterr().out
    assert judge(tmp_path / "other", statuses, placeholders=("pending-one",)) == 1


def test_a_placeholder_that_now_checks_something_or_is_not_in_the_set_is_stale(tmp_path, capsys):
    assert judge(tmp_path / "passes", ALL_PASS, placeholders=("tasks-x",)) == 1
    assert "STALE tasks-x (a named placeholder that now checks something" in capsys.readouterr().out
    assert judge(tmp_path / "unknown", ALL_PASS, placeholders=("nowhere",)) == 1
    assert "STALE --placeholder nowhere (scenario not in this requirement set)" in capsys.readouterr().out


def test_not_scored_counts_are_printed_per_reason(tmp_path, capsys):
    assert judge(tmp_path, ALL_PASS) == 0
    out = capsys.readouterr().out
    assert "  not scored (extension): 1/1 passed" in out
    assert "  not scored (pending): 1/1 passed" in out


def _client_run(folder: Path, statuses: list[str] | None) -> Path:
    if statuses is not None:
        run = folder / "client-s-2026-01-01T00-00-00-000Z"
        run.mkdir(parents=True)
        (run / "checks.json").write_text(json.dumps([{"id": f"c{i}", "status": st} for i, st in enumerate(statuses)]))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.parametrize(("statuses", "verdict", "says"), [
    (["SUCCESS", "INFO"], 0, "each with a SUCCESS"),
    (["SKIPPED", "INFO"], 1, "no check succeeded (2 checks: INFO, SKIPPED)"),
    ([], 1, "no check succeeded (0 checks: none)"),
    (None, 1, "no checks.json under"),
])
def test_the_client_lane_guard_fails_a_run_that_checked_nothing(tmp_path, capsys, statuses, verdict, says):
    assert summarize.main(["--checked", str(_client_run(tmp_path / "s", statuses))]) == verdict
    assert says in capsys.readouterr().out


@pytest.mark.parametrize("scenario", ["alpha", "pending-one"])
def test_a_required_scenario_that_checked_nothing_fails(tmp_path, capsys, scenario):
    statuses = {**ALL_PASS, scenario: [("x1", "SKIPPED"), ("x2", "INFO")]}
    assert judge(tmp_path, statuses) == 1
    out = capsys.readouterr().out
    assert f"SKIP  {scenario}" in out and f"{scenario}: skipped (no check succeeded)" in out


def judge_with(tmp_path: Path, statuses, extra: list[str]) -> int:
    tmp_path.mkdir(parents=True, exist_ok=True)
    req = tmp_path / "req.yaml"
    req.write_text(REQUIREMENTS)
    ef = tmp_path / "expected-failures-server-2026-07-28.yaml"
    ef.write_text("server: []\n")
    results = tmp_path / "results"
    write_run(results, statuses, "2026-01-01T00-00-00-000Z")
    args = [a for name in extra for a in ("--scored-extension", name)]
    return summarize.main([str(results), str(ef), "--requirements", str(req), *args])


def test_a_scored_extension_must_run_and_pass(tmp_path, capsys):
    skills = {"sep-2640-x": [("c1", "SUCCESS"), ("c2", "SKIPPED")]}
    assert judge_with(tmp_path / "ok", {**ALL_PASS, **skills}, ["sep-2640-x"]) == 0
    assert "scored: 3/3 passed" in capsys.readouterr().out
    assert judge_with(tmp_path / "missing", ALL_PASS, ["sep-2640-x"]) == 1
    assert "sep-2640-x: no results" in capsys.readouterr().out
    failing = {"sep-2640-x": [("c1", "FAILURE")]}
    assert judge_with(tmp_path / "fail", {**ALL_PASS, **failing}, ["sep-2640-x"]) == 1
    capsys.readouterr()


def test_a_scored_extension_whose_checks_all_skipped_fails(tmp_path, capsys):
    skipped = {"sep-2640-x": [("c1", "SKIPPED"), ("c2", "SKIPPED")]}
    assert judge_with(tmp_path, {**ALL_PASS, **skipped}, ["sep-2640-x"]) == 1
    assert "sep-2640-x: skipped (no check succeeded)" in capsys.readouterr().out


def test_scoring_an_extension_the_set_calls_not_scored_scores_it(tmp_path, capsys):
    statuses = {**ALL_PASS, "tasks-x": [("t1", "SKIPPED")]}  # a placeholder would be let off
    assert judge_with(tmp_path, statuses, ["tasks-x"]) == 1
    assert "tasks-x: skipped (no check succeeded)" in capsys.readouterr().out
