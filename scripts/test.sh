#!/usr/bin/env bash
# Every check the project has, in one command (CI runs exactly this via .ci/run).
#   bash scripts/test.sh          set-up, lint, types, unit + integration tiers, example,
#                                 the package (wheel + sdist, the wheel served from a fresh venv),
#                                 official conformance runner (server and client lanes),
#                                 interop with the official TypeScript and Python SDKs
#   bash scripts/test.sh --fast   set-up (Python only), lint, types, unit tier; no Node, no servers
#   bash scripts/test.sh --coverage   the full run, measured: line coverage of src/rondo over
#                                 every tier and every Python subprocess; fails under COVERAGE_MIN
#   bash scripts/test.sh --only LANE[,LANE]   set-up, then only those lanes (ruff, mypy, unit,
#                                 integration, example, package, conformance, proxy-conformance,
#                                 client-conformance, interop)
# Exits non-zero if any lane fails; ends with one summary line per lane.
# No lane can go quiet: a tier that collects nothing fails, a skip outside the fast tier fails,
# a missing example fails, a missing real component (redis-server) fails set-up.
set -uo pipefail

# 1: `mypy --strict` errors fail the run.
STRICT_TYPES=1
# Per-module line coverage floor for src/rondo under --coverage (percent).
COVERAGE_MIN=90
# Requirement sets the conformance lane runs (each needs conformance/expected-failures-server-REQ.yaml).
CONFORMANCE_REQUIREMENTS=(2026-07-28 2025-11-25)
# Extension scenarios no requirement set names, run and scored in every conformance lane (they
# must pass with real checks: a scenario whose every check is skipped fails).
SCORED_SERVER_EXTENSIONS=(--scored-extension sep-2640-skills-enumeration
  --scored-extension sep-2640-skills-manifest --scored-extension sep-2640-skills-directory)
SCORED_CLIENT_EXTENSIONS=(--scored-extension sep-2640-client-no-prefetch
  --scored-extension sep-2640-client-verify-digest --scored-extension sep-2640-client-verify-size
  --scored-extension sep-2640-client-verify-frontmatter)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh

fast=0 measure=0 only=""
usage() { echo "usage: bash scripts/test.sh [--fast | --coverage] [--only LANE[,LANE]]" >&2; exit 2; }
while (( $# )); do
  case "$1" in
    --fast) fast=1 ;;
    --coverage) measure=1 ;;
    --only) [[ -n "${2:-}" ]] || usage; only=",$2,"; shift ;;
    *) usage ;;
  esac
  shift
done
want() { [[ -z "$only" || "$only" == *",$1,"* ]]; }  # is lane $1 part of this run?
if (( fast )); then
  # The fast tier sets up no servers: tests needing one may skip here (tests/helpers/components.py),
  # and the skips are counted in the closing summary. Everywhere else a missing part fails.
  export RONDO_ALLOW_MISSING_COMPONENTS=1
else
  unset RONDO_ALLOW_MISSING_COMPONENTS
fi

LOG_DIR="$ROOT/results/test-logs"
mkdir -p "$LOG_DIR"
summary=()
lane_failures=0
tests_passed=0 tests_failed=0 tests_skipped=0

passed_of() {  # "N/M" from a summarize.py count line
  grep -E "$1" "$2" | grep -oE '[0-9]+/[0-9]+' | head -n1 || echo "?"
}
banner() { printf '\n=== %s ===\n' "$*"; }
record() {  # lane status detail
  summary+=("$(printf '%-22s %-6s %s' "$1" "$2" "$3")")
  [[ "$2" == FAIL ]] && lane_failures=$((lane_failures + 1))
  return 0
}
count() {  # "<n> <word>" from a pytest closing line, 0 when absent
  grep -oE "[0-9]+ $2" <<<"$1" | head -n1 | cut -d' ' -f1 | grep . || echo 0
}

banner setup
start=$SECONDS
if (( fast )); then setup_args=(--python); else setup_args=(); fi
if ! bash scripts/setup.sh "${setup_args[@]}"; then
  echo "setup failed: nothing else can run" >&2
  echo "lanes: 0 passed, 1 failed"
  exit 1
fi
record setup PASS "$((SECONDS - start))s"

if want ruff; then
banner "ruff check"
start=$SECONDS
if .venv/bin/ruff check src tests conformance benchmarks interop examples docs/snippets scripts; then
  record ruff PASS "$((SECONDS - start))s"
else
  record ruff FAIL "$((SECONDS - start))s"
fi
fi

if want mypy; then
banner "mypy --strict src/rondo (STRICT_TYPES=$STRICT_TYPES)"
start=$SECONDS
mypy_out="$(.venv/bin/mypy --strict src/rondo 2>&1)"
mypy_rc=$?
printf '%s\n' "$mypy_out" | tail -n 40
if (( mypy_rc == 0 )); then
  record mypy PASS "$((SECONDS - start))s"
elif (( STRICT_TYPES )); then
  record mypy FAIL "$(tail -n1 <<<"$mypy_out")"
else
  record mypy REPORT "$(tail -n1 <<<"$mypy_out") (not enforced: STRICT_TYPES=0)"
fi
fi

run_pytest_tier() {  # name marker-expression
  local name="$1" marker="$2" log="$LOG_DIR/pytest-$1.log" rc last passed failed errors skipped
  want "$name" || return 0
  pytest_ran=1
  banner "pytest $name tier (-m \"$marker\")"
  start=$SECONDS
  .venv/bin/python -m pytest -m "$marker" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  last="$(grep -E '[0-9]+ (passed|failed|skipped|errors?|deselected)' "$log" | tail -n1)"
  passed=$(count "$last" passed)
  failed=$(count "$last" failed)
  errors=$(count "$last" error)
  skipped=$(count "$last" skipped)
  tests_passed=$((tests_passed + passed))
  tests_failed=$((tests_failed + failed + errors))
  tests_skipped=$((tests_skipped + skipped))
  local detail="$passed passed, $((failed + errors)) failed, $skipped skipped ($((SECONDS - start))s)"
  if (( rc == 5 )); then
    # A tier that collects nothing (a renamed marker, a moved folder) has stopped checking.
    record "pytest $name" FAIL "no tests collected (exit 5)"
  elif (( rc == 0 && skipped > 0 && ! fast )); then
    record "pytest $name" FAIL "$detail: skips are allowed only in the fast tier"
  elif (( rc == 0 )); then
    record "pytest $name" PASS "$detail"
  else
    record "pytest $name" FAIL "$detail (exit $rc)"
  fi
}

if (( measure )); then
  # From here on every Python process measures itself: coverage's .pth in the venv starts it
  # when COVERAGE_PROCESS_START is set, each writes its own file (parallel), combined at the end.
  rm -rf "$ROOT/.coverage-data" && mkdir -p "$ROOT/.coverage-data"
  export COVERAGE_PROCESS_START="$ROOT/pyproject.toml" COVERAGE_FILE="$ROOT/.coverage-data/cov"
fi

pytest_ran=0
run_pytest_tier unit "not slow"
if (( ! fast )); then
  run_pytest_tier integration "slow"

  if want example; then
  banner "example: examples/preferences.py --check"
  start=$SECONDS
  if [[ ! -f examples/preferences.py ]]; then
    record example FAIL "examples/preferences.py is missing"
  elif timeout 120 .venv/bin/python examples/preferences.py --check </dev/null; then
    record example PASS "$((SECONDS - start))s"
  else
    record example FAIL "examples/preferences.py --check failed"
  fi
  fi

  if want package; then
  banner "package: wheel and sdist, the wheel served from a fresh venv"
  start=$SECONDS
  log="$LOG_DIR/package.log"
  if timeout 600 bash scripts/package-check.sh >"$log" 2>&1; then
    record package PASS "$(tail -n1 "$log" | sed 's/^package: //') ($((SECONDS - start))s)"
  else
    tail -n 40 "$log"
    record package FAIL "see $log"
  fi
  fi

  want conformance && for req in "${CONFORMANCE_REQUIREMENTS[@]}"; do
    banner "conformance $req"
    start=$SECONDS
    log="$LOG_DIR/conformance-$req.log"
    bash conformance/run-server.sh "$req" "${SCORED_SERVER_EXTENSIONS[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    # summarize.py prints "scored: N/M passed", then one "  not scored (REASON): N/M passed"
    # line per reason the requirement set gives (pending, extension, added-after-release).
    detail="passed $(passed_of "^scored:" "$log") scored"
    while read -r why; do
      detail+=", $(passed_of "^  not scored \($why\):" "$log") $why"
    done < <(grep -oE '^  not scored \([^)]+\)' "$log" | sed -E 's/^  not scored \((.*)\)/\1/')
    detail+=" (not scored: required here) ($((SECONDS - start))s)"
    if (( rc == 0 )); then
      record "conformance $req" PASS "$detail"
    else
      record "conformance $req" FAIL "$detail; see results/server-$req"
    fi
  done

  # The same server scenarios through `rondo proxy` in front of the fixture (docs/gateway.md),
  # judged against conformance/expected-failures-proxy-REQ.yaml (the tasks extension is not
  # relayed yet); about a minute for both requirement sets.
  want proxy-conformance && for req in "${CONFORMANCE_REQUIREMENTS[@]}"; do
    banner "conformance $req through rondo proxy"
    start=$SECONDS
    log="$LOG_DIR/proxy-conformance-$req.log"
    bash conformance/run-server.sh "$req" --through-proxy 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    detail="passed $(passed_of "^scored:" "$log") scored ($((SECONDS - start))s)"
    if (( rc == 0 )); then
      record "proxy conformance $req" PASS "$detail"
    else
      record "proxy conformance $req" FAIL "$detail; see results/proxy-$req"
    fi
  done
  # The legacy bridge (docs/gateway.md): the fixture as a 2025-11-25 upstream behind
  # `rondo proxy --upstream-protocol 2025-11-25 --bridge hold|replay`, and every
  # input-required-result-* scenario of 2026-07-28 through it (about 25 s per mode).
  want proxy-conformance && for mode in hold replay; do
    banner "conformance 2026-07-28 input rounds through the legacy bridge ($mode)"
    start=$SECONDS
    log="$LOG_DIR/bridge-conformance-$mode.log"
    bash conformance/run-server.sh 2026-07-28 --bridge "$mode" --only input-required-result- 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    detail="passed $(passed_of "^scored:" "$log") scored ($((SECONDS - start))s)"
    if (( rc == 0 )); then
      record "bridge conformance $mode" PASS "$detail"
    else
      record "bridge conformance $mode" FAIL "$detail; see results/bridge-$mode-2026-07-28"
    fi
  done

  want client-conformance && for req in "${CONFORMANCE_REQUIREMENTS[@]}"; do
    banner "client conformance $req"
    start=$SECONDS
    log="$LOG_DIR/client-conformance-$req.log"
    if bash conformance/run-client.sh "$req" "${SCORED_CLIENT_EXTENSIONS[@]}" >"$log" 2>&1; then
      record "client conf. $req" PASS "$(grep -oE '[0-9]+ scenarios alone: .*' "$log" | tail -n1) ($((SECONDS - start))s)"
    else
      tail -n 40 "$log"
      record "client conf. $req" FAIL "see $log and results/client-$req"
    fi
  done

  if want interop; then
  banner "interop with the official SDKs"
  start=$SECONDS
  log="$LOG_DIR/interop.log"
  if bash interop/run.sh >"$log" 2>&1; then
    record interop PASS "$(grep -c 'PASS' "$log") peer checks ($((SECONDS - start))s)"
  else
    tail -n 40 "$log"
    record interop FAIL "see $log"
  fi
  fi
fi

if (( pytest_ran && tests_passed + tests_failed == 0 )); then
  record pytest FAIL "no test ran at all"
fi

if (( measure )); then
  unset COVERAGE_PROCESS_START
  banner "coverage of src/rondo (all tiers, subprocesses included; floor ${COVERAGE_MIN}%)"
  log="$LOG_DIR/coverage.log"
  .venv/bin/python -m coverage combine --quiet --data-file="$COVERAGE_FILE" "$ROOT/.coverage-data" >/dev/null 2>&1
  if .venv/bin/python scripts/coverage_gate.py "$COVERAGE_FILE" "$COVERAGE_MIN" >"$log" 2>&1; then
    record coverage PASS "$(tail -n1 "$log")"
  else
    record coverage FAIL "$(tail -n1 "$log")"
  fi
fi

banner summary
printf '%s\n' "${summary[@]}"
echo "lanes: $(( ${#summary[@]} - lane_failures )) passed, $lane_failures failed"
echo "tests: $tests_passed passed, $tests_failed failed, $tests_skipped skipped"
if (( measure )) && [[ -f "$LOG_DIR/coverage.log" ]]; then
  echo "line coverage per module (src/rondo):"
  cat "$LOG_DIR/coverage.log"
fi
(( lane_failures == 0 ))
