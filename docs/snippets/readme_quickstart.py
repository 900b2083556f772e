# file: docs/snippets/readme_quickstart.py
import rondo
from rondo import elicit

server = rondo.Server("preferences")


@server.tool
def favorite_color(user: str, ctx: rondo.Context) -> str:
    """Ask the user for their favorite color."""
    answer = ctx.ask("color", elicit.form(
        f"Which color do you like, {user}?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
    ))
    return f"{user} likes {answer.content['color']}." if answer.accepted else "No color."


if __name__ == "__main__":
    server.run_stdio()  # or server.run_http(port=8000), or mount server.asgi() anywhere
