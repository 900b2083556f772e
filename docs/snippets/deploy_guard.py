# file: docs/snippets/deploy_guard.py
import rondo
from rondo import elicit
from rondo.fleet import FleetError, check_fleet

server = rondo.Server("travel", state=rondo.StatePolicy())  # no keys: a random per-process key


@server.tool
def book(city: str, ctx: rondo.Context) -> str:
    """Confirm, then book."""
    ok = ctx.ask("ok", elicit.form(f"Book {city}?", {"type": "object", "properties": {}}))
    return "booked" if ok.accepted else "cancelled"


check_fleet(server, workers=1)  # one process: allowed (serving HTTP logs a warning)
try:
    check_fleet(server, workers=3)  # what `rondo run --workers 3` checks before binding
except FleetError as exc:
    assert "RONDO_STATE_KEYS" in str(exc) and "tool book" in str(exc)
    print(exc)
else:
    raise AssertionError("a fleet on a per-process key must not start")
