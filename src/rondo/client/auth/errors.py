"""What can go wrong while signing in. Messages name URLs and OAuth error codes, never tokens,
secrets or authorization codes."""

from __future__ import annotations

from rondo.client.errors import ClientError


class AuthError(ClientError):
    """Signing in to a protected server failed; the message says at which step and why."""


class DiscoveryError(AuthError):
    """Protected resource or authorization server metadata was missing, malformed, too big,
    too slow, or named another resource or issuer than the one asked for."""


class RegistrationError(AuthError):
    """The client has no usable identity at the authorization server (no pre-registered
    credentials for it, no client ID metadata document support, registration refused)."""


class AuthorizationDenied(AuthError):
    """The authorization response was refused: an OAuth error, a state or `iss` mismatch, no
    code, or no redirect within the time allowed."""


class TokenError(AuthError):
    """The token endpoint refused the request or answered something that is not a token."""


class InsufficientScope(AuthError):
    """The server still refuses after the bounded number of (re-)authorizations."""
