"""The benchmark fixture with `tracing=True` and no exporter (the OpenTelemetry API's no-op
tracer): the `rondo-tracing` target of benchmarks/run.py.

    python benchmarks/server_tracing.py http PORT | stdio
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["RONDO_BENCH_TRACING"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import server  # noqa: E402

if __name__ == "__main__":
    server.main(sys.argv[1:])
