"""`rondo inspect APP.py`: what a server file offers, as text and as JSON, asked in process
(no transport: no socket, no child process, no lifespan hook)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rondo.cli.inspect import inspect_command

APP = textwrap.dedent('''
    from typing import Annotated, Literal

    import msgspec

    import rondo

    server = rondo.Server("rich", instructions="Try me.\\nSecond line.", state=None)
    started = []


    @server.lifespan
    async def never(server):
        started.append(1)  # inspect must not run it
        raise RuntimeError("lifespan ran")
        yield {}


    @server.tool
    def plan(city: str, nights: Annotated[int, msgspec.Meta(ge=1, le=30)] = 2,
             mode: Literal["car", "train"] = "train") -> dict[str, object]:
        """Plan a trip.

        More text."""
        return {"city": city}


    @server.tool(task="optional")
    async def crunch(n: int) -> int:
        """Crunch numbers."""
        return n


    @server.resource("file:///readme.txt", mime_type="text/plain")
    def readme() -> str:
        """The readme."""
        return "hi"


    @server.resource("notes://{day}")
    def notes(day: str) -> str:
        """Notes of a day."""
        return day


    @server.prompt
    def review(code: str, style: str = "short") -> str:
        """Review code."""
        return code
''')


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "rich_app.py"
    path.write_text(APP)
    return path


def test_text_shows_every_component_with_its_arguments(app: Path, capsys) -> None:
    assert inspect_command([str(app)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("rich ")
    assert "instructions: Try me." in text and "Second line" not in text
    assert "extension io.modelcontextprotocol/tasks" in text
    assert "tools (2)" in text and "  plan -> structured\n      Plan a trip.\n" in text
    assert "      city: string\n" in text
    assert '      nights?: integer (>=1, <=30) = 2\n' in text
    assert '      mode?: "car" | "train" = "train"\n' in text
    assert "  crunch -> structured  [task: optional]" in text
    assert "resources (1)\n  file:///readme.txt  readme  (text/plain)\n      The readme." in text
    assert "resource templates (1)\n  notes://{day}  notes" in text
    assert "prompts (1)\n  review(code, style?)\n      Review code." in text


def test_json_is_discovery_and_the_four_lists_as_the_wire_has_them(app: Path, capsys) -> None:
    assert inspect_command([str(app), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert set(found) == {"discover", "tools", "resources", "resourceTemplates", "prompts"}
    assert found["discover"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "rich"
    plan = next(t for t in found["tools"] if t["name"] == "plan")
    assert plan["inputSchema"]["properties"]["nights"] == {"type": "integer", "minimum": 1,
                                                           "maximum": 30, "default": 2}
    assert plan["outputSchema"] == {"type": "object"}
    assert [r["uri"] for r in found["resources"]] == ["file:///readme.txt"]
    assert [t["uriTemplate"] for t in found["resourceTemplates"]] == ["notes://{day}"]
    assert found["prompts"][0]["arguments"] == [
        {"name": "code", "required": True}, {"name": "style", "required": False}]


def test_many_tools_are_read_across_pages(tmp_path: Path, capsys) -> None:
    path = tmp_path / "many.py"
    path.write_text("import rondo\nserver = rondo.Server('many', state=None, "
                    "warn_undocumented=False)\nfor i in range(250):\n"
                    "    server.tool(lambda x: x, name=f't{i:03d}')\n")
    assert inspect_command([str(path), "--json"]) == 0
    names = [t["name"] for t in json.loads(capsys.readouterr().out)["tools"]]
    assert names == [f"t{i:03d}" for i in range(250)]


def test_no_transport_is_started(app: Path) -> None:
    # Run as its own process with stdin closed: no stdio loop waits on it, no port opens,
    # and the lifespan hook (which would fail) never runs.
    done = subprocess.run([sys.executable, "-c", "import sys; from rondo.cli.inspect import "
                           "inspect_command; raise SystemExit(inspect_command(sys.argv[1:]))",
                           str(app)], capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "lifespan ran" not in done.stderr and "tools (2)" in done.stdout


def test_a_file_without_a_server_is_a_clear_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "empty.py"
    path.write_text("x = 1\n")
    assert inspect_command([str(path)]) == 2
    assert "defines no rondo.Server" in capsys.readouterr().err


def test_the_sample_in_the_docs_is_what_inspect_prints(capsys) -> None:
    doc = (Path(__file__).resolve().parents[1].parent / "docs" / "install.md").read_text()
    sample = doc.split("$ rondo inspect examples/preferences.py\n", 1)[1].split("\n...\n", 1)[0]
    root = Path(__file__).resolve().parents[1].parent
    assert inspect_command([str(root / "examples" / "preferences.py")]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(sample + "\n"), printed


def test_the_rondo_command_runs_inspect_and_install(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1].parent
    shown = subprocess.run([sys.executable, "-m", "rondo", "inspect",
                            str(root / "examples" / "preferences.py")], capture_output=True,
                           text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert shown.returncode == 0 and "tools (3)" in shown.stdout, shown.stderr
    printed = subprocess.run([sys.executable, "-m", "rondo", "install", "mcp-json",
                              str(root / "examples" / "preferences.py"), "--print"],
                             capture_output=True, text=True, timeout=60, cwd=tmp_path,
                             stdin=subprocess.DEVNULL)
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["mcpServers"]["preferences"]["command"] == sys.executable
    assert not list(tmp_path.iterdir())  # --print wrote nothing
