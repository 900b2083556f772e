"""The user's browser for the facade's live tests: open an /authorize URL, approve the facade's
consent page, go through the provider's (automated) sign-in and back to the facade's /callback,
and stop at the client's redirect URI (returned, not visited)."""

from __future__ import annotations

import html
import re

import httpx


def approve(http: httpx.Client, url: str, stop_at: str) -> str:
    page = http.get(url)
    assert page.status_code == 200 and "Allow access?" in page.text, page.text
    fields = {k: html.unescape(v) for k, v in re.findall(r'name="(request|csrf)" value="([^"]+)"', page.text)}
    action = html.unescape(re.search(r'action="([^"]+)"', page.text).group(1))  # type: ignore[union-attr]
    response = http.post(str(page.url.join(action)), data={**fields, "decision": "approve"})
    for _hop in range(20):
        assert response.status_code in (302, 303), (str(response.url), response.text)
        location = str(response.url.join(response.headers["location"]))
        if location.startswith(stop_at):
            return location
        response = http.get(location)
    raise AssertionError("too many redirects")
