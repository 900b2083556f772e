"""benchmarks/run.py's own arithmetic: what it reads from wrk and /proc and how it reports it.
Nothing here is timed."""

from __future__ import annotations

import os

from tests.helpers.modules import load

run = load("benchmarks/run.py")

WRK_OUTPUT = """Running 5s test @ http://127.0.0.1:4242/mcp
  2 threads and 2 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   212.00us  101.00us   3.10ms   91.00%
  Latency Distribution
     50%  190.00us
     99%  470.00us
  45678 requests in 5.00s, 12.34MB read
Requests/sec:   9135.60
flows 12345 bad 0 duration_us 5000123
"""


def test_wrk_numbers_reads_the_request_count_beside_the_rate() -> None:
    found = run.wrk_numbers(WRK_OUTPUT)
    assert found["requests"] == 45678 and found["rps"] == 9135.60
    assert found["flows"] == 12345 and found["duration_us"] == 5000123
    assert round(found["p50"], 6) == 0.19 and round(found["p99"], 6) == 0.47


def test_cpu_per_divides_the_cpu_used_by_the_count() -> None:
    assert run.cpu_per((1.0, 1.5), 5000) == 100.0  # 0.5 s over 5,000 requests: 100 us each
    assert run.cpu_per((None, 1.5), 5000) is None
    assert run.cpu_per((1.0, 1.5), 0) is None  # no request answered: no figure, no division


def test_cpu_seconds_counts_this_process_work() -> None:
    before = run.cpu_seconds(os.getpid())
    assert before is not None
    total = 0
    while (run.cpu_seconds(os.getpid()) or 0) - before < 0.05:
        total += sum(range(10_000))
    assert total > 0
    assert run.cpu_seconds(2**22 + 12345) is None  # no such process


def test_the_cpu_rows_count_less_as_better() -> None:
    results = {"floor": run.Measured(mrtr_cpu_us=240.0), "rondo": run.Measured(mrtr_cpu_us=300.0)}
    row = next(line for line in run.table(results).splitlines() if "CPU per flow" in line)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1:4] == ["240.0", "300.0", "0.80x"]


def test_stolen_time_is_read_from_proc_stat_and_reported_as_a_share() -> None:
    before = run.cpu_ticks("cpu  100 0 50 800 10 0 5 0 0 0\ncpu0 1 2 3\n")
    after = run.cpu_ticks("cpu  160 0 70 900 10 0 5 60 7 0\n")
    assert before == (0, 965) and after == (60, 1205)
    assert run.stolen_share(before, after) == 60 / 240
    assert run.stolen_share(None, after) is None and run.stolen_share(after, after) is None
    assert run.cpu_ticks("nonsense") is None and run.cpu_ticks("cpu 1 2") is None
    assert "stolen by the hypervisor during the run: 25.0%" in run.machine((0.1, 0.2, 0.3), 0.25)
    assert "stolen" not in run.machine((0.1, 0.2, 0.3))
    here = run.cpu_ticks()
    assert here is None or here[1] > 0
