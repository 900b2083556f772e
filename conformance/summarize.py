"""Judge one conformance run: per-scenario status, counts, and a strict exit code.

    python conformance/summarize.py results/server-2026-07-28 conformance/expected-failures-server-2026-07-28.yaml

Stricter than the runner's own verdict: WARNINGs count as failures, the not-scored scenarios
(pending ones and the tasks extension's alike) must pass too, a scenario with no results
fails, a scenario whose checks are all SKIPPED or INFO is SKIP (not a pass; it fails, unless
the lane names it with `--placeholder NAME`: a scenario the runner ships checking nothing yet),
and a baseline entry that now passes is stale (fails), as is a named placeholder that now
checks something or is not in the set.

    python conformance/summarize.py --checked results/client-2026-07-28/single/SCENARIO

exits 0 only when every `checks.json` under the folder (at least one) has a SUCCESS: the client
lane's guard against a scenario the runner passes with "Passed: 0/0".
Uses only the standard library: the two YAML shapes it reads are tiny and fixed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNNER_PACKAGE = ROOT / ".cache/conformance/node_modules/@modelcontextprotocol/conformance"
SEVERITY = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1, "INFO": 0, "SKIPPED": 0}
TIMESTAMP_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}T[0-9-]+Z?$")


@dataclass
class Requirements:
    scored: list[str]
    not_scored: dict[str, str]  # scenario -> reason

    def reason(self, scenario: str) -> str | None:
        return self.not_scored.get(scenario)


@dataclass
class Scenario:
    name: str
    checks: list[dict]
    failing: dict[str, dict] = field(default_factory=dict)  # check id -> worst failing check

    def __post_init__(self) -> None:
        for check in self.checks:
            if check.get("status") not in ("FAILURE", "WARNING"):
                continue
            current = self.failing.get(check["id"])
            if current is None or SEVERITY[check["status"]] > SEVERITY[current["status"]]:
                self.failing[check["id"]] = check

    @property
    def status(self) -> str:
        statuses = {c["status"] for c in self.failing.values()}
        if "FAILURE" in statuses:
            return "FAIL"
        if statuses:
            return "WARN"
        # Nothing failed, but nothing was checked either (all SKIPPED/INFO, or no checks).
        return "PASS" if any(c.get("status") == "SUCCESS" for c in self.checks) else "SKIP"


def _strip_comment(line: str) -> str:
    return re.sub(r"\s+#.*$", "", line.rstrip()) if not line.lstrip().startswith("#") else ""


def parse_requirements(path: Path) -> Requirements:
    """Read the runner's frozen requirements YAML (`server:` list, `not_scored:` mappings)."""
    scored: list[str] = []
    not_scored: dict[str, str] = {}
    section = None
    entry: dict[str, str] = {}

    def flush() -> None:
        if entry.get("leg") == "server" and "scenario" in entry:
            not_scored[entry["scenario"]] = entry.get("reason", "?")
        entry.clear()

    for raw in path.read_text().splitlines():
        line = _strip_comment(raw)
        if not line.strip():
            continue
        if not line.startswith(" "):
            flush()
            section = line.rstrip(":").strip()
            continue
        if section == "server" and (m := re.match(r"^\s{2}- (\S+)$", line)):
            scored.append(m.group(1))
        elif section == "not_scored":
            if m := re.match(r"^\s{2}- (\w+): (.+)$", line):
                flush()
                entry[m.group(1)] = m.group(2).strip()
            elif m := re.match(r"^\s{4}(\w+): (.+)$", line):
                entry[m.group(1)] = m.group(2).strip()
    flush()
    if not scored:
        raise SystemExit(f"summarize: no server scenarios found in {path}")
    return Requirements(scored, not_scored)


def only(requirements: Requirements, prefix: str) -> Requirements:
    """The scenarios whose names start with `prefix` (a lane that runs a part of the set)."""
    return Requirements([n for n in requirements.scored if n.startswith(prefix)],
                        {n: r for n, r in requirements.not_scored.items() if n.startswith(prefix)})


def parse_expected(path: Path) -> list[str]:
    """Entries of the `server:` list in an expected-failures file (`scenario` or `scenario:check`)."""
    if not path.exists():
        return []
    entries: list[str] = []
    section = None
    for raw in path.read_text().splitlines():
        line = _strip_comment(raw)
        if not line.strip():
            continue
        if not line.startswith((" ", "-")):
            section = line.rstrip(":").strip()
        elif section == "server" and (m := re.match(r"^\s*- (\S+)$", line)):
            entries.append(m.group(1).strip("'\""))
    return entries


def load_results(results_dir: Path) -> dict[str, Scenario]:
    """Latest `server-<scenario>-<timestamp>/checks.json` per scenario."""
    found: dict[str, Path] = {}
    for checks in sorted(results_dir.glob("server-*/checks.json")):
        name = TIMESTAMP_SUFFIX.sub("", checks.parent.name).removeprefix("server-")
        found[name] = checks  # sorted by timestamp, so the last one wins
    return {name: Scenario(name, json.loads(p.read_text())) for name, p in found.items()}


def _brief(check: dict) -> str:
    message = str(check.get("errorMessage") or check.get("description") or "")
    message = " ".join(message.split())
    return message[:200] + ("..." if len(message) > 200 else "")


def checked(folder: Path) -> tuple[bool, str]:
    """Did every run under `folder` check something (at least one SUCCESS per checks.json)?"""
    runs = sorted(folder.rglob("checks.json"))
    if not runs:
        return False, f"no checks.json under {folder}"
    for path in runs:
        statuses = [c.get("status") for c in json.loads(path.read_text())]
        if "SUCCESS" not in statuses:
            return False, f"{path.parent.name}: no check succeeded ({len(statuses)} checks: " \
                          f"{', '.join(sorted(set(map(str, statuses)))) or 'none'})"
    return True, f"{len(runs)} run(s), each with a SUCCESS"


def summarize(results_dir: Path, expected_path: Path, requirements: Requirements,
              placeholders: frozenset[str] = frozenset()) -> int:
    results = load_results(results_dir)
    expected = parse_expected(expected_path)
    whole = {e for e in expected if ":" not in e}
    partial: dict[str, set[str]] = {}
    for e in expected:
        if ":" in e:
            scenario, check_id = e.split(":", 1)
            partial.setdefault(scenario, set()).add(check_id)

    problems: list[str] = []
    stale: list[str] = []
    ordered = requirements.scored + list(requirements.not_scored)

    def judge(name: str) -> str:
        """Print one scenario line; collect unexpected failures and stale baseline entries."""
        reason = requirements.reason(name)
        tag = f" [not scored: {reason}]" if reason else ""
        scenario = results.get(name)
        if scenario is None:
            problems.append(f"{name}: no results (scenario did not run)")
            print(f"  MISS  {name}{tag}")
            return "MISS"
        baselined = partial.get(name, set())
        unexpected = {
            cid: c
            for cid, c in scenario.failing.items()
            if name not in whole and cid not in baselined
        }
        note = ""
        if name in whole:
            note = " (expected failure)" if scenario.failing else ""
            if not scenario.failing:
                stale.append(f"{name} (passes now: remove it from the baseline)")
        else:
            stale.extend(
                f"{name}:{cid} (passes now: remove it from the baseline)"
                for cid in sorted(baselined - scenario.failing.keys())
            )
            if scenario.failing and not unexpected:
                note = " (expected: " + ", ".join(sorted(scenario.failing)) + ")"
        print(f"  {scenario.status}  {name}{tag}{note}")
        if scenario.status == "SKIP" and name not in whole and name not in placeholders:
            problems.append(f"{name}: skipped (no check succeeded)")
        if name in placeholders and scenario.status != "SKIP":
            stale.append(f"{name} (a named placeholder that now checks something: drop --placeholder)")
        for cid, check in sorted(unexpected.items()):
            print(f"          {check['status']} {cid}: {_brief(check)}")
            problems.append(f"{name}:{cid} {check['status']}")
        return scenario.status

    print(f"conformance results in {results_dir}")
    statuses = {name: judge(name) for name in ordered}
    for entry in sorted(expected):
        if entry.split(":", 1)[0] not in statuses:
            stale.append(f"{entry} (scenario not in this requirement set)")
    for name in sorted(placeholders - statuses.keys()):
        stale.append(f"--placeholder {name} (scenario not in this requirement set)")

    def counts(label: str, names: list[str]) -> None:
        got = [statuses[n] for n in names]
        print(
            f"{label}: {got.count('PASS')}/{len(got)} passed, {got.count('WARN')} with warnings, "
            f"{got.count('FAIL')} failing, {got.count('SKIP')} skipped, {got.count('MISS')} missing"
        )

    counts("scored", requirements.scored)
    counts("not scored, required here", list(requirements.not_scored))
    for why in sorted(set(requirements.not_scored.values())):
        counts(f"  not scored ({why})", [n for n, r in requirements.not_scored.items() if r == why])
    if placeholders:
        print(f"placeholders (may skip): {', '.join(sorted(placeholders))}")
    print(f"baseline: {len(expected)} expected-failure entries in {expected_path}")
    for entry in stale:
        print(f"  STALE {entry}")
    if problems:
        print(f"unexpected failures or warnings: {len(problems)}")
        for p in problems:
            print(f"  {p}")
    ok = not problems and not stale
    print("verdict: OK" if ok else "verdict: FAILED")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--list"]:
        # --list REQUIREMENTS.yaml --only PREFIX: the scenario names a lane with --only runs.
        lister = argparse.ArgumentParser(prog="summarize.py --list")
        lister.add_argument("requirements", type=Path)
        lister.add_argument("--only", default="")
        listed = lister.parse_args(argv[1:])
        wanted = only(parse_requirements(listed.requirements), listed.only)
        print("\n".join(wanted.scored + list(wanted.not_scored)))
        return 0
    if argv[:1] == ["--checked"]:
        if len(argv) != 2:
            raise SystemExit("usage: summarize.py --checked FOLDER")
        ok, why = checked(Path(argv[1]))
        print(f"checked: {why}")
        return 0 if ok else 1
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results_dir", type=Path)
    parser.add_argument("expected_failures", type=Path)
    parser.add_argument(
        "--placeholder", action="append", default=[], metavar="SCENARIO",
        help="a scenario the runner ships checking nothing yet: SKIP does not fail the lane",
    )
    parser.add_argument(
        "--requirements",
        type=Path,
        help="the runner's requirements YAML (default: derived from the expected-failures name)",
    )
    parser.add_argument(
        "--scored-extension",
        action="append",
        default=[],
        metavar="SCENARIO",
        help="an extension scenario the requirement set does not name, scored here: it must "
        "have run and passed (all checks SKIPPED fails it); repeatable",
    )
    parser.add_argument("--only", default="", metavar="PREFIX",
                        help="judge only the scenarios whose names start with PREFIX")
    args = parser.parse_args(argv)
    req_path = args.requirements
    if req_path is None:
        m = re.search(r"(\d{4}-\d{2}-\d{2})", args.expected_failures.name)
        if not m:
            parser.error("cannot tell the revision; pass --requirements")
        req_path = RUNNER_PACKAGE / "requirements" / f"{m.group(1)}.yaml"
    requirements = parse_requirements(req_path)
    for scenario in args.scored_extension:
        if scenario not in requirements.scored:
            requirements.scored.append(scenario)
        requirements.not_scored.pop(scenario, None)
    if args.only:
        requirements = only(requirements, args.only)
    return summarize(args.results_dir, args.expected_failures, requirements,
                     frozenset(args.placeholder))


if __name__ == "__main__":
    sys.exit(main())
