"""The confirmation round before a side effect: an `input_required` form that shows the exact
request, and a sealed digest of that request that the accepted retry must match.

The digest rides in the request state the server seals (`ctx.state`), so any replica can check
the retry; a retry whose request differs from the one shown (other arguments reaching the
handler, a different base URL) is asked again, never sent.
"""

from __future__ import annotations

from typing import Any

from rondo import Context, InputRequired, ToolError, elicit

from .request import Prepared

KEY = "confirm"
UNCONFIRMED = ("refuse", "run")
_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Send this request",
                               "description": "true sends it; false or declining does not"}},
    "required": ["confirm"],
}


def question(prepared: Prepared) -> dict[str, Any]:
    return elicit.form(f"Send this request?\n\n{prepared.describe()}", _SCHEMA)


def can_ask(ctx: Context) -> bool:
    caps = ctx.client_capabilities.get("elicitation")
    if not isinstance(caps, dict):
        return False
    return not caps or "form" in caps  # an empty object means form mode (2025-06-18 style)


def check(ctx: Context, prepared: Prepared, unconfirmed: str) -> InputRequired | None:
    """None when the request may be sent now; else the round that asks, or a refusal
    (ToolError) when the user said no or the client cannot ask and `unconfirmed="refuse"`."""
    if not can_ask(ctx):
        if unconfirmed == "run":
            return None
        raise ToolError(
            f"{prepared.method} {prepared.url.path} changes data and needs the user's "
            "confirmation, but this client cannot ask its user (no elicitation capability); "
            "nothing was sent")
    digest = prepared.digest()
    asked = question(prepared)
    state = ctx.state if isinstance(ctx.state, dict) else None
    answer = elicit.response(ctx, KEY, asked)
    if answer is elicit.MISSING or state is None or state.get("request") != digest:
        return InputRequired({KEY: asked}, state={"request": digest})
    if not (answer.accepted and (answer.content or {}).get(KEY) is True):
        raise ToolError(f"not sent: the user did not confirm {prepared.method} "
                        f"{prepared.url.path} ({answer.action})")
    return None
