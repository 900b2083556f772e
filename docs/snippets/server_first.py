# file: docs/snippets/server_first.py
import rondo

server = rondo.Server("hello", "1.0.0")


@server.tool
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    server.run()  # stdio; server.run("http", port=8000) serves http://127.0.0.1:8000/mcp
