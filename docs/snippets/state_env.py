# file: docs/snippets/state_env.py
import re
import subprocess
import sys

import rondo

# `python -m rondo.state ID` prints one fresh `ID:base64url-secret` entry.
entry = subprocess.run([sys.executable, "-m", "rondo.state", "k2026a"],
                       capture_output=True, text=True, check=True).stdout.strip()
print(entry.split(":")[0] + ":<43 base64url characters>")
assert re.fullmatch(r"k2026a:[A-Za-z0-9_-]{43}", entry)

# Every worker of the server reads the same value (signing key first).
environ = {"RONDO_STATE_KEYS": entry}
policy = rondo.StatePolicy.from_env(environ)
print(policy)  # StatePolicy(<Keyring ids=['k2026a']>, ttl=300, ...)
assert repr(policy).startswith("StatePolicy(<Keyring ids=['k2026a']>, ttl=300,")

# rondo.Server(...) does this by default, reading os.environ.
server = rondo.Server("travel", state=rondo.StatePolicy.from_env(environ, ttl=600))
assert server.state_policy.ttl == 600 and not server.state_policy.ephemeral
