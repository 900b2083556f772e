# file: docs/snippets/client_auth_machine.py
import asyncio
import sys

from rondo.client import Client, ClientCredentials

sys.path.insert(0, ".")  # the demo: a real authorization server and a protected server
from tests.helpers.auth_live import protected_world  # noqa: E402


async def main(url: str) -> None:
    # A machine, not a user: the client_credentials grant with a secret (or private_key=PEM
    # for a private-key JWT assertion, with `pip install 'rondo-mcp[auth]'`).
    auth = ClientCredentials("reporting-bot", client_secret="s3cret")
    async with Client(url, auth=auth) as client:
        tools = [tool.name for tool in await client.list_tools()]
        print(tools)
        assert "whoami" in tools


with protected_world() as url:
    asyncio.run(main(url))
