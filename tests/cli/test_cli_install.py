"""`rondo install HOST APP.py`: each host's file, in its place and shape, merged with what is
there (other entries and settings kept, the previous file backed up); the command written
in it starts the server and answers tools/list."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from rondo.cli.install import HOSTS, config_path, install_command
from rondo.client import Client

APP = textwrap.dedent('''
    import rondo
    from rondo import elicit

    server = rondo.Server("notes")


    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b


    @server.tool
    async def confirm(ctx: rondo.Context) -> str:
        """Ask before doing it."""
        answer = await ctx.ask("ok", elicit.form("Sure?", {"type": "object", "properties": {
            "ok": {"type": "boolean"}}, "required": ["ok"]}))
        return "done" if answer.content["ok"] else "kept"
''')

# host -> (its default file relative to HOME or the project, the keys down to the servers)
WHERE: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "claude-desktop": ("home", ".config/Claude/claude_desktop_config.json", ("mcpServers",)),
    "claude-code": ("home", ".claude.json", ("projects", "{proj}", "mcpServers")),
    "cursor": ("home", ".cursor/mcp.json", ("mcpServers",)),
    "vscode": ("home", ".config/Code/User/mcp.json", ("servers",)),
    "gemini": ("home", ".gemini/settings.json", ("mcpServers",)),
    "mcp-json": ("proj", "mcp.json", ("mcpServers",)),
}
PROJECT_SCOPE = {
    "claude-code": (".mcp.json", ("mcpServers",)),
    "cursor": (".cursor/mcp.json", ("mcpServers",)),
    "vscode": (".vscode/mcp.json", ("servers",)),
    "gemini": (".gemini/settings.json", ("mcpServers",)),
}
OTHER = {"command": "npx", "args": ["-y", "some-other-server"]}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("RONDO_STATE_KEYS", raising=False)
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    app = tmp_path / "src" / "notes_app.py"
    app.parent.mkdir()
    app.write_text(APP)
    return {"home": home, "proj": proj, "app": app}


def _seed(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """An existing config: another server and a setting of the host's own."""
    doc: dict[str, Any] = {"theme": "dark"}
    holder = doc
    for key in keys[:-1]:
        holder = holder.setdefault(key, {"keep": True})
    holder[keys[-1]] = {"other": OTHER}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return doc


def _dig(doc: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    for key in keys:
        doc = doc[key]
    return doc


async def _tools_of(entry: dict[str, Any]) -> list[str]:
    """Start the server the way the host would from its entry, and list its tools."""
    if "command" in entry:
        target: Any = [entry["command"], *entry.get("args", [])]
        client = Client(target, env=entry.get("env"), cwd=entry.get("cwd"), timeout=30)
    else:
        client = Client(entry.get("httpUrl") or entry["url"], headers=entry.get("headers"))
    async with client:
        return sorted(tool.name for tool in await client.list_tools())


@pytest.mark.parametrize("host", HOSTS)
def test_install_writes_the_hosts_file_keeps_the_rest_and_the_entry_runs(
        host: str, world: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, relative, keys = WHERE[host]
    keys = tuple(k.format(proj=world["proj"].resolve()) for k in keys)
    path = world[base] / relative
    before = _seed(path, keys)
    previous = path.read_text()

    assert install_command([host, str(world["app"])], home=world["home"], cwd=world["proj"]) == 0
    assert str(path) in capsys.readouterr().err

    doc = json.loads(path.read_text())
    assert doc["theme"] == "dark"  # the host's own settings stay
    if len(keys) > 1:
        assert _dig(doc, keys[:-1])["keep"] is True
    servers = _dig(doc, keys)
    assert servers["other"] == OTHER  # and so do the other servers
    entry = servers["notes"]
    assert entry["command"] == sys.executable
    assert entry["args"] == ["-m", "rondo", "run", str(world["app"].resolve())]
    assert re.fullmatch(r"k1:[A-Za-z0-9_-]{43}", entry["env"]["RONDO_STATE_KEYS"])
    assert ("type" in entry) == (host in ("claude-code", "vscode"))
    assert ("cwd" in entry) == (host == "gemini")
    assert path.with_name(path.name + ".bak").read_text() == previous
    assert before["theme"] == "dark"
    assert asyncio.run(_tools_of(entry)) == ["add", "confirm"]


@pytest.mark.parametrize("host", sorted(PROJECT_SCOPE))
def test_project_scope_writes_the_projects_file(host: str, world: dict[str, Path]) -> None:
    relative, keys = PROJECT_SCOPE[host]
    assert install_command([host, str(world["app"]), "--scope", "project", "--name", "n2"],
                           home=world["home"], cwd=world["proj"]) == 0
    entry = _dig(json.loads((world["proj"] / relative).read_text()), keys)["n2"]
    assert entry["args"][-1] == str(world["app"].resolve())
    assert not (world["home"] / ".claude.json").exists()


def test_reinstalling_replaces_the_entry_and_backs_up_the_last_file(world: dict[str, Path]) -> None:
    args = ["cursor", str(world["app"]), "--env", "MODE=one"]
    assert install_command(args, home=world["home"], cwd=world["proj"]) == 0
    path = world["home"] / ".cursor" / "mcp.json"
    first = path.read_text()
    assert install_command(["cursor", str(world["app"]), "--env", "MODE=two"],
                           home=world["home"], cwd=world["proj"]) == 0
    assert json.loads(path.read_text())["mcpServers"]["notes"]["env"]["MODE"] == "two"
    assert list(json.loads(path.read_text())["mcpServers"]) == ["notes"]
    assert path.with_name("mcp.json.bak").read_text() == first
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)  # it holds the state keys


def test_print_writes_nothing_and_shows_the_entry(world: dict[str, Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert install_command(["vscode", str(world["app"]), "--print"], home=world["home"],
                           cwd=world["proj"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["servers"]["notes"]["type"] == "stdio"
    assert not any(world["home"].rglob("*.json")) and not any(world["proj"].rglob("*.json"))


def test_a_config_that_is_not_plain_json_is_left_alone(world: dict[str, Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = world["proj"] / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  // my servers\n  "servers": {}\n}\n')
    assert install_command(["vscode", str(world["app"]), "--scope", "project"],
                           home=world["home"], cwd=world["proj"]) == 2
    err = capsys.readouterr().err
    assert "not plain JSON" in err and "--print" in err
    assert path.read_text().startswith('{\n  // my servers')
    assert not path.with_name("mcp.json.bak").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["nonsense", "APP"], "unknown host 'nonsense'"),
    (["claude-desktop", "APP", "--scope", "project"], "has no 'project' scope"),
    (["claude-desktop", "--http", "http://127.0.0.1:1/mcp", "--name", "x"], "Settings > Connectors"),
    (["cursor", "--http", "ftp://x"], "needs an http"),
    (["cursor", "--http", "http://127.0.0.1:1/mcp"], "needs --name"),
    (["cursor"], "give a server file"),
    (["cursor", "APP", "--env", "NOEQUALS"], "NAME=VALUE"),
    (["cursor", "missing.py"], "no such file"),
])
def test_mistakes_are_refused_with_the_fix(args: list[str], message: str, world: dict[str, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(world["app"]) if a == "APP" else a for a in args]
    assert install_command(args, home=world["home"], cwd=world["proj"]) == 2
    assert message in capsys.readouterr().err
    assert not any(world["home"].rglob("*.json"))


def test_config_paths_on_macos_and_windows() -> None:
    home, cwd = Path("/Users/ada"), Path("/work")
    mac = {h: config_path(h, "user", home=home, cwd=cwd, platform="darwin", environ={})
           for h in ("claude-desktop", "vscode")}
    assert mac["claude-desktop"] == home / "Library/Application Support/Claude/claude_desktop_config.json"
    assert mac["vscode"] == home / "Library/Application Support/Code/User/mcp.json"
    appdata = {"APPDATA": "C:/Users/ada/AppData/Roaming"}
    assert config_path("claude-desktop", "user", home=home, cwd=cwd, platform="win32",
                       environ=appdata) == Path("C:/Users/ada/AppData/Roaming/Claude/claude_desktop_config.json")
    assert config_path("vscode", "user", home=home, cwd=cwd, platform="win32",
                       environ=appdata) == Path("C:/Users/ada/AppData/Roaming/Code/User/mcp.json")


def _serve_http(app: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "rondo", "run", str(app), "--http", "127.0.0.1:0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "RONDO_STATE_KEYS": "k1:" + "A" * 43})
    deadline = time.monotonic() + 30
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"serving \S+ at (http://\S+/mcp)", line)
        if found:
            return proc, found.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("the server never said where it serves")


def test_http_entries_point_each_host_at_the_served_url(world: dict[str, Path]) -> None:
    proc, url = _serve_http(world["app"])
    try:
        for host in ("claude-code", "cursor", "vscode", "gemini", "mcp-json"):
            assert install_command([host, "--http", url, "--name", "remote", "--header",
                                    "X-Team: tools"], home=world["home"], cwd=world["proj"]) == 0
            base, relative, keys = WHERE[host]
            keys = tuple(k.format(proj=world["proj"].resolve()) for k in keys)
            entry = _dig(json.loads((world[base] / relative).read_text()), keys)["remote"]
            assert entry["headers"] == {"X-Team": "tools"}
            assert (entry.get("httpUrl") or entry.get("url")) == url
            assert ("httpUrl" in entry) == (host == "gemini")
            assert asyncio.run(_tools_of(entry)) == ["add", "confirm"]
    finally:
        proc.terminate()
        proc.wait(10)
