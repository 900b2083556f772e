"""`rondo keys check URL...`: do these workers hold the same state keys?

Each URL is a worker's MCP endpoint (`http://10.0.0.5:8000/mcp`) or its base URL; the check
reads `/.well-known/rondo/keys` from it, which a worker answers only to a loopback client, so
run it on the host (or in the pod) of each worker, or through `kubectl port-forward`.
`--samples N` reads each URL N times over fresh connections, to reach several workers sharing
one socket. The check passes when every worker has shared keys (no random per-process key),
the same signing key and the same keys (ids and fingerprints). Secrets are never shown.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .keyinfo import REPORT_PATH

if TYPE_CHECKING:
    import httpx


def report_url(url: str) -> str:
    base = url.rstrip("/")
    if base.endswith("/mcp"):
        base = base[: -len("/mcp")]
    return base + REPORT_PATH


# A report is a few hundred bytes; more (decoded, whatever the content encoding) is refused as
# it arrives, so a hostile or confused endpoint cannot fill the checker's memory.
MAX_REPORT = 64 * 1024


def read_report(client: httpx.Client, url: str, timeout: float) -> Any:
    """One worker's key report (decoded JSON), its body bounded in size and in total time."""
    import time

    import msgspec

    from ..wire.inflate import ACCEPT_ENCODING, InflateError, Inflater, TooLarge

    deadline = time.monotonic() + timeout
    body = bytearray()
    with client.stream("GET", report_url(url), headers={"accept-encoding": ACCEPT_ENCODING}) as response:
        if response.status_code != 200:
            raise RuntimeError(f"{url}: HTTP {response.status_code} from {REPORT_PATH} "
                               "(the report answers loopback clients only)")
        try:
            inflater = Inflater(response.headers.get("content-encoding", ""), MAX_REPORT)
            for chunk in response.iter_raw():
                for piece in inflater.feed(chunk):
                    body += piece
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{url}: the key report took more than {timeout:g} s")
            for piece in inflater.finish():
                body += piece
        except TooLarge:
            raise RuntimeError(f"{url}: the key report is larger than {MAX_REPORT} bytes") from None
        except InflateError as exc:
            raise RuntimeError(f"{url}: the key report cannot be decoded ({exc})") from None
    try:
        return msgspec.json.decode(bytes(body))
    except (msgspec.DecodeError, RecursionError):
        raise RuntimeError(f"{url}: the key report is not JSON") from None


def fetch_reports(url: str, samples: int, timeout: float,
                  transport: httpx.BaseTransport | None = None) -> list[dict[str, Any]]:
    import httpx

    seen: dict[Any, dict[str, Any]] = {}
    for _ in range(samples):
        # A fresh connection each time; no proxy from the environment (the report answers
        # loopback clients only).
        with httpx.Client(timeout=timeout, transport=transport, trust_env=False) as client:
            report = read_report(client, url, timeout)
        if not isinstance(report, dict):
            raise RuntimeError(f"{url}: the key report is not a JSON object")
        seen.setdefault(report.get("pid"), report)
    return list(seen.values())


def ring_of(report: dict[str, Any]) -> tuple[Any, ...]:
    keys = report.get("keys") or []
    return (report.get("signing"),
            tuple(sorted((k.get("id"), k.get("fingerprint")) for k in keys if isinstance(k, dict))))


def compare(found: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Problems in a fleet's reports ([] when consistent)."""
    problems: list[str] = []
    for url, report in found:
        if report.get("state") == "off":
            continue
        if report.get("ephemeral"):
            problems.append(f"{url} (pid {report.get('pid')}): random per-process key, no "
                            "RONDO_STATE_KEYS")
    rings: dict[tuple[Any, ...], list[str]] = {}
    for url, report in found:
        if report.get("state") != "off" and not report.get("ephemeral"):
            rings.setdefault(ring_of(report), []).append(f"{url} (pid {report.get('pid')})")
    if len(rings) > 1:
        groups = sorted(rings.items(), key=lambda item: -len(item[1]))
        majority = groups[0][0]
        for ring, where in groups[1:]:
            differs = "signing key" if ring[0] != majority[0] else "keys"
            for place in where:
                problems.append(f"{place}: different {differs} than {groups[0][1][0]} "
                                f"(signs with {ring[0]!r}; ids {[k for k, _ in ring[1]]})")
    names = {report.get("server") for _, report in found}
    if len(names) > 1:
        problems.append(f"the URLs serve different servers: {sorted(map(str, names))}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rondo keys check",
                                     description="Compare the state keys of a fleet's workers.")
    parser.add_argument("urls", nargs="+", metavar="URL")
    parser.add_argument("--samples", type=int, default=1,
                        help="reads per URL over fresh connections (workers sharing a socket)")
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args(argv)
    if not 1 <= args.samples <= 1000:
        parser.error("--samples must be 1 to 1000")
    found: list[tuple[str, dict[str, Any]]] = []
    try:
        for url in args.urls:
            found.extend((url, report) for report in fetch_reports(url, args.samples, args.timeout))
    except Exception as exc:
        print(f"rondo keys check: {exc}", file=sys.stderr)
        return 2
    for url, report in found:
        ids = [k.get("id") for k in report.get("keys") or []]
        print(f"{url} pid {report.get('pid')}: {report.get('state')}, signs with "
              f"{report.get('signing')!r}, keys {ids}")
    problems = compare(found)
    for problem in problems:
        print(f"MISMATCH {problem}")
    if problems:
        return 1
    print(f"ok: {len(found)} workers hold the same keys")
    return 0


def keys_command(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: rondo keys check URL... [--samples N]\n"
              "       rondo keys new [ID]   (prints an ID:secret entry for RONDO_STATE_KEYS)")
        return 0 if argv else 2
    if argv[0] == "check":
        return main(argv[1:])
    if argv[0] == "new":
        from ..state.__main__ import main as new_main

        return new_main(argv[1:])
    print(f"rondo keys: unknown command {argv[0]!r} (check, new)", file=sys.stderr)
    return 2
