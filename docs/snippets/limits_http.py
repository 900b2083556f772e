# file: docs/snippets/limits_http.py
import pytest

from rondo.transport.serve import HttpLimits, uvicorn_options

# serve(server, limits=HttpLimits(...)) merges exactly these uvicorn settings.
limits = HttpLimits(header_timeout=5, body_timeout=20, max_connections=500)
options = uvicorn_options(limits)
assert options["timeout_keep_alive"] == 5.0  # the idle keep-alive default
assert options["limit_concurrency"] == 501  # ours answers 503 first, at accept time
assert options["http"].startswith("rondo.transport.serve.limits:Guarded")  # whichever parser runs

# A limit that cannot work fails at start-up, not under load.
with pytest.raises(ValueError, match="descriptor limit"):
    HttpLimits(max_connections=10**9)
