"""What the state boundary binds a token to: the few request facts it reads.

`state/` sits below the server, so it names a protocol instead of importing `Context`; the
server's `Context` satisfies it, and so does any object a caller builds by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class RequestFacts(Protocol):
    @property
    def request_method(self) -> str: ...

    @property
    def request_params(self) -> Mapping[str, Any]: ...

    @property
    def server_name(self) -> str: ...

    @property
    def auth(self) -> Any: ...
