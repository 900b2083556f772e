"""OAuth errors the facade answers with (RFC 6749 §4.1.2.1, §5.2; RFC 7591 §3.2.2; RFC 8707)."""

from __future__ import annotations


class OAuthError(Exception):
    """`error` is the RFC's code, `description` a fixed human text (never a token or a secret,
    never the client's input echoed back), `status` the HTTP status of a JSON answer."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}
