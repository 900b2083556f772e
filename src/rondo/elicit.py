"""Ask the user: `rondo.elicit.form(message, schema)` or `rondo.elicit.url(message, url)`.

Read the answer with `rondo.elicit.response(ctx, key, request)`: `MISSING` until the client has
answered, then an `ElicitResult`. Implementation in `rondo.kinds.elicit`.
"""

from __future__ import annotations

from .kinds import MISSING, response
from .kinds.elicit import ElicitResult, form, url

__all__ = ["MISSING", "ElicitResult", "form", "response", "url"]
