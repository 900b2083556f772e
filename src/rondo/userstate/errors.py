"""What per-user state raises. Each is `public`: a tool that lets one escape answers with an
`isError` result carrying the message (never the store's address or credentials)."""

from __future__ import annotations


class UserStateError(Exception):
    """Base of every per-user state failure; its message is meant for the caller."""

    public = True


class NoPrincipal(UserStateError):
    """The request has no verified principal and anonymous callers get no shared state."""


class StateTooLarge(UserStateError):
    """A key or an encoded value is over its bound, or a bounded store is full."""


class StoreUnavailable(UserStateError):
    """The store did not answer; nothing was read or written."""
