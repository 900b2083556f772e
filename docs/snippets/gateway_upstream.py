# file: docs/snippets/gateway_upstream.py
import rondo
from rondo import elicit

upstream = rondo.Server("bookings")
DAY = elicit.form("Which day?", {
    "type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]})


@upstream.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@upstream.tool
def book(room: str, ctx: rondo.Context) -> str:
    """Book a room: asks which day (an input_required round on 2026-07-28)."""
    answer = ctx.ask("day", DAY)
    return f"{room} booked for {answer.content['day']}"


if __name__ == "__main__":
    upstream.run_stdio()
