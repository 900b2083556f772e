"""The conformance lanes cannot pass a scenario that checked nothing (issue 37, referees):
conformance/run-client.sh against a stand-in runner that exits 0 with "Passed: 0/0"."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1].parent

FAKE_RUNNER = """#!/usr/bin/env bash
# A stand-in for the conformance runner: one client scenario, whose checks are $FAKE_CHECKS.
cmd=$1; shift
case "$cmd" in
  list) printf 'Client scenarios:\\n  - fake-one\\n' ;;
  client)
    out=""; scenario=""
    while [[ $# -gt 0 ]]; do
      case "$1" in -o) out=$2; shift ;; --scenario) scenario=$2; shift ;; esac
      shift
    done
    if [[ -n "$scenario" ]]; then
      mkdir -p "$out/client-$scenario-2026-01-01T00-00-00-000Z"
      printf '%s' "$FAKE_CHECKS" >"$out/client-$scenario-2026-01-01T00-00-00-000Z/checks.json"
      echo "Passed: 0/0"
    fi ;;
esac
exit 0
"""


def run_client_lane(tmp_path: Path, checks: list[dict[str, str]]) -> subprocess.CompletedProcess[str]:
    runner = tmp_path / "conformance"
    runner.write_text(FAKE_RUNNER)
    runner.chmod(0o755)
    env = {**os.environ, "RONDO_CONFORMANCE": str(runner), "RONDO_CLIENT_OUT": str(tmp_path / "out"),
           "FAKE_CHECKS": json.dumps(checks)}
    return subprocess.run(["bash", "conformance/run-client.sh", "2026-07-28"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("checks", [
    [{"id": "a", "status": "SKIPPED"}, {"id": "b", "status": "INFO"}],
    [],
])
def test_the_client_lane_fails_a_scenario_the_runner_passes_with_nothing_checked(tmp_path: Path, checks) -> None:
    done = run_client_lane(tmp_path, checks)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "client 2026-07-28: FAIL fake-one" in done.stdout
    assert "1 scenarios alone: 0 passed, 1 failed" in done.stdout


def test_the_client_lane_passes_a_scenario_that_checked_something(tmp_path: Path) -> None:
    done = run_client_lane(tmp_path, [{"id": "a", "status": "SUCCESS"}, {"id": "b", "status": "SKIPPED"}])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "client 2026-07-28: PASS fake-one" in done.stdout


def test_the_server_lane_names_its_placeholders_and_summarize_takes_them() -> None:
    script = (ROOT / "conformance/run-server.sh").read_text()
    assert "2026-07-28) PLACEHOLDERS=(tasks-status-notifications)" in script
    assert "--placeholder=" in script
