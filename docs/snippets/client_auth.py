# file: docs/snippets/client_auth.py
import asyncio
import sys

import httpx

from rondo.client import Client, MemoryTokenStore, OAuth, RedirectHandler

sys.path.insert(0, ".")  # the demo: a real authorization server and a protected server
from tests.helpers.auth_live import protected_world  # noqa: E402

visits = []


async def show_to_user(url: str) -> str:
    """Your app opens `url` in a browser and returns the URL the browser came back to.
    The demo authorization server approves at once, so following it is enough here."""
    visits.append(url)
    async with httpx.AsyncClient() as http:
        return (await http.get(url)).headers["location"]


async def main(url: str) -> None:
    auth = OAuth(redirect=RedirectHandler("http://127.0.0.1:8976/callback", show_to_user),
                 store=MemoryTokenStore())  # the default; FileTokenStore(path) keeps tokens
    async with Client(url, auth=auth) as client:
        result = await client.call_tool("whoami", {})  # 401, discovery, sign-in, retry
        print(result.text)
        assert result.text == "sub=johndoe"
        await client.call_tool("whoami", {})  # the token is reused: no second sign-in
    assert len(visits) == 1
    assert "code_challenge_method=S256" in visits[0] and "resource=" in visits[0]


with protected_world() as url:
    asyncio.run(main(url))
