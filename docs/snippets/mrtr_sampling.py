# file: docs/snippets/mrtr_sampling.py
import asyncio

import rondo
from rondo import roots, sampling
from rondo.client import Client, SampleRequest

server = rondo.Server("legacy-kinds")


@server.tool
def describe_workspace(ctx: rondo.Context) -> str:
    """Sampling and roots are deprecated (SEP-2577) but still work, both in one round."""
    answers = ctx.ask_all({
        "roots": roots.list(),
        "summary": sampling.create_message("Describe a workspace in five words.", 30),
    })
    paths = [root.path for root in answers["roots"]]
    return f"{paths}: {answers['summary'].text}"


def model(request: SampleRequest) -> dict:
    text = "Tidy, small, fast, typed, tested."
    return {"role": "assistant", "model": "tiny", "content": {"type": "text", "text": text}}


async def main() -> None:
    async with Client(server, on_sample=model, on_roots=["file:///work"]) as client:
        text = (await client.call_tool("describe_workspace")).text
        print(text)
        assert text == "['/work']: Tidy, small, fast, typed, tested."


asyncio.run(main())
