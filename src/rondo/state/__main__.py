"""`python -m rondo.state [ID]` prints a fresh `ID:base64url-secret` entry for RONDO_STATE_KEYS."""

from __future__ import annotations

import sys
import time

from .keys import Keyring, new_secret_text, parse_env_keys


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: python -m rondo.state [KEY_ID]", file=sys.stderr)
        return 2
    key_id = argv[0] if argv else time.strftime("k%Y%m%d")
    entry = f"{key_id}:{new_secret_text()}"
    try:
        Keyring(parse_env_keys(entry))
    except ValueError as exc:
        print(f"python -m rondo.state: {exc}", file=sys.stderr)
        return 2
    print(entry)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
