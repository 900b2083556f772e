"""Subprocesses that measure import weight must not be measured by coverage.

Under `scripts/test.sh --coverage` every Python process starts coverage (COVERAGE_PROCESS_START),
and coverage imports modules of its own (dataclasses, ...). A test that checks what a cold
import pulls in runs its interpreter with `unmeasured_env()` instead.
"""

from __future__ import annotations

import os


def unmeasured_env() -> dict[str, str]:
    """This process's environment without the variables that start coverage in a child."""
    return {k: v for k, v in os.environ.items() if k not in ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG")}
