"""`rondo install HOST APP.py[:SERVER]`: put a server into an MCP host's configuration.

Each host keeps its MCP servers in a JSON file of its own, in its own place and shape (see
docs/install.md for each one and where its documentation says so). The entry runs the server
with this Python (`python -m rondo run /abs/app.py`), so it works whatever the host's PATH is,
with the environment it needs (the state keys when the server has multi-round flows) and, for
hosts that take one, the app's folder as working directory. `--http URL` writes an entry for a
server already served over HTTP instead.

The file is merged, never replaced: other entries and settings stay as they were, an entry of
the same name is replaced, the previous file is kept as `FILE.bak`, and the new one is written
to a temporary file and renamed into place. `--print` writes nothing and prints the entry.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HOSTS = ("claude-desktop", "claude-code", "cursor", "vscode", "gemini", "mcp-json")
ALIASES = {"claude": "claude-desktop", "code": "vscode", "vs-code": "vscode",
           "gemini-cli": "gemini", "mcp.json": "mcp-json", "json": "mcp-json"}
# The scopes each host has, its default first.
SCOPES = {
    "claude-desktop": ("user",),
    "claude-code": ("local", "project", "user"),
    "cursor": ("user", "project"),
    "vscode": ("user", "project"),
    "gemini": ("user", "project"),
    "mcp-json": ("project",),
}
NAMES = {"claude-desktop": "Claude Desktop", "claude-code": "Claude Code", "cursor": "Cursor",
         "vscode": "VS Code", "gemini": "Gemini CLI", "mcp-json": "mcp.json"}


class InstallError(Exception):
    """What the user asked for cannot be written; the message says why and what to do."""


def _app_support(home: Path, platform: str, environ: Mapping[str, str]) -> Path:
    """Where desktop apps keep per-user settings on this platform."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform.startswith("win"):
        appdata = environ.get("APPDATA")
        return Path(appdata) if appdata else home / "AppData" / "Roaming"
    xdg = environ.get("XDG_CONFIG_HOME")
    return Path(xdg) if xdg else home / ".config"


def config_path(host: str, scope: str, *, home: Path, cwd: Path, platform: str = sys.platform,
                environ: Mapping[str, str] = os.environ) -> Path:
    """The file `host` reads its MCP servers from, for `scope`."""
    if host == "claude-desktop":
        return _app_support(home, platform, environ) / "Claude" / "claude_desktop_config.json"
    if host == "claude-code":
        return cwd / ".mcp.json" if scope == "project" else home / ".claude.json"
    if host == "cursor":
        return (cwd if scope == "project" else home) / ".cursor" / "mcp.json"
    if host == "vscode":
        if scope == "project":
            return cwd / ".vscode" / "mcp.json"
        return _app_support(home, platform, environ) / "Code" / "User" / "mcp.json"
    if host == "gemini":
        return (cwd if scope == "project" else home) / ".gemini" / "settings.json"
    return cwd / "mcp.json"


def stdio_entry(host: str, command: str, args: Sequence[str], env: Mapping[str, str],
                cwd: str | None) -> dict[str, Any]:
    """The host's entry for a server it starts itself (stdio)."""
    entry: dict[str, Any] = {}
    if host in ("claude-code", "vscode"):
        entry["type"] = "stdio"
    entry["command"] = command
    entry["args"] = list(args)
    if env:
        entry["env"] = dict(env)
    if cwd is not None and host == "gemini":  # the one host here whose entry takes a cwd
        entry["cwd"] = cwd
    return entry


def http_entry(host: str, url: str, headers: Mapping[str, str]) -> dict[str, Any]:
    """The host's entry for a server served over Streamable HTTP at `url`."""
    if host == "claude-desktop":
        raise InstallError(
            "Claude Desktop does not read remote servers from its configuration file: add "
            f"{url} under Settings > Connectors instead, or install the server file (stdio)")
    entry: dict[str, Any]
    if host == "gemini":
        entry = {"httpUrl": url}  # Gemini CLI: `url` means the old SSE transport
    elif host == "cursor":
        entry = {"url": url}
    else:
        entry = {"type": "http", "url": url}
    if headers:
        entry["headers"] = dict(headers)
    return entry


def servers_of(doc: dict[str, Any], host: str, scope: str, cwd: Path) -> dict[str, Any]:
    """The object in `doc` that maps server names to entries (made when missing)."""
    holder = doc
    if host == "claude-code" and scope == "local":
        projects = doc.setdefault("projects", {})
        if not isinstance(projects, dict):
            raise InstallError("its \"projects\" is not an object")
        holder = projects.setdefault(str(cwd), {})
        if not isinstance(holder, dict):
            raise InstallError(f"its project entry for {cwd} is not an object")
    key = "servers" if host == "vscode" else "mcpServers"
    servers = holder.setdefault(key, {})
    if not isinstance(servers, dict):
        raise InstallError(f"its \"{key}\" is not an object")
    return servers


def read_config(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallError(
            f"{path} is not plain JSON ({exc.msg}, line {exc.lineno}); rondo leaves it as it is. "
            "Add the entry by hand: rondo install ... --print shows it") from None
    if not isinstance(doc, dict):
        raise InstallError(f"{path} does not hold a JSON object; rondo leaves it as it is")
    return doc


def write_config(path: Path, doc: Mapping[str, Any]) -> Path | None:
    """Write `doc` to `path` atomically; the previous file (if any) is kept as `path.bak`,
    which is returned. A new file is readable by its owner only (it may hold keys)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup: Path | None = None
    mode = 0o600
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        shutil.copy2(path, backup)
        mode = path.stat().st_mode & 0o777
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=2, ensure_ascii=False)
            out.write("\n")
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return backup


def launch_of(target: str, server: Any, extra_env: Mapping[str, str],
              environ: Mapping[str, str] = os.environ) -> tuple[str, list[str], dict[str, str], str]:
    """(command, args, env, cwd) that start `target` over stdio with this Python."""
    path_text, sep, attr = target.partition(":")
    app = Path(path_text).resolve()
    args = ["-m", "rondo", "run", f"{app}{sep}{attr}"]
    env: dict[str, str] = {}
    from ..state.keys import ENV_KEYS, new_secret_text

    policy = getattr(server, "state_policy", None)
    if policy is not None and ENV_KEYS not in extra_env:
        if environ.get(ENV_KEYS):
            env[ENV_KEYS] = environ[ENV_KEYS]  # the keys this shell serves with
        elif policy.ephemeral:
            from ..core.replicas import interactive_components

            if interactive_components(server):
                # Multi-round flows outlive a restart of the server by the host.
                env[ENV_KEYS] = f"k1:{new_secret_text()}"
    env.update(extra_env)
    return sys.executable, args, env, str(app.parent)


def _pairs(values: Sequence[str], sep: str, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, found, rest = value.partition(sep)
        if not found or not name.strip():
            raise InstallError(f"{flag} takes NAME{sep}VALUE, got {value!r}")
        out[name.strip()] = rest.strip() if sep == ":" else rest
    return out


def install_command(argv: list[str], *, home: Path | None = None, cwd: Path | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rondo install",
        description="Add a server to an MCP host's configuration (merged with what is there; "
                    "the previous file is kept as FILE.bak).",
        epilog="hosts: " + ", ".join(HOSTS) + ". Default scopes: claude-code local (this "
               "project, in ~/.claude.json), mcp-json project (./mcp.json), the others user.")
    parser.add_argument("host", metavar="HOST", help="one of: " + ", ".join(HOSTS))
    parser.add_argument("app", metavar="APP.py[:SERVER]", nargs="?",
                        help="the server file (not needed with --http)")
    parser.add_argument("--name", help="the entry's name (default: the server's name)")
    parser.add_argument("--http", metavar="URL", help="a server already served at URL "
                        "(Streamable HTTP) instead of a file the host starts")
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                        help="an HTTP header the host sends (with --http); repeatable")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for the server; repeatable")
    parser.add_argument("--scope", help="where the entry goes: user, project (or for "
                        "claude-code: local)")
    parser.add_argument("--config", metavar="FILE", help="write this file instead of the "
                        "host's usual one")
    parser.add_argument("--print", action="store_true", dest="show",
                        help="write nothing: print the entry to paste by hand")
    args = parser.parse_args(argv)
    try:
        return _install(args, home or Path.home(), (cwd or Path.cwd()).resolve())
    except InstallError as exc:
        print(f"rondo install: {exc}", file=sys.stderr)
        return 2


def _install(args: argparse.Namespace, home: Path, cwd: Path) -> int:
    host = ALIASES.get(args.host.lower(), args.host.lower())
    if host not in HOSTS:
        raise InstallError(f"unknown host {args.host!r}: one of {', '.join(HOSTS)}")
    scope = args.scope or SCOPES[host][0]
    if scope not in SCOPES[host]:
        raise InstallError(f"{NAMES[host]} has no {scope!r} scope: one of "
                           f"{', '.join(SCOPES[host])}")
    env = _pairs(args.env, "=", "--env")
    headers = _pairs(args.header, ":", "--header")
    if args.http:
        if args.app:
            raise InstallError("give a server file or --http URL, not both")
        if not args.http.startswith(("http://", "https://")):
            raise InstallError(f"--http needs an http(s) URL, got {args.http!r}")
        if env:
            raise InstallError("--env is for a server the host starts; a served one has its own")
        if not args.name:
            raise InstallError("--http needs --name (the entry's name)")
        name = args.name
        entry = http_entry(host, args.http, headers)
    else:
        if not args.app:
            raise InstallError("give a server file (APP.py[:SERVER]) or --http URL")
        if headers:
            raise InstallError("--header goes with --http")
        from ..fleet.loader import load_server

        try:
            server = load_server(args.app)
        except SystemExit as exc:
            raise InstallError(str(exc).removeprefix("rondo: ")) from None
        name = args.name or server.name
        command, run_args, run_env, workdir = launch_of(args.app, server, env)
        entry = stdio_entry(host, command, run_args, run_env, workdir)
    if args.show:
        key = "servers" if host == "vscode" else "mcpServers"
        print(json.dumps({key: {name: entry}}, indent=2, ensure_ascii=False))
        return 0
    path = Path(args.config).expanduser() if args.config else config_path(host, scope, home=home, cwd=cwd)
    doc = read_config(path)
    try:
        servers = servers_of(doc, host, scope, cwd)
    except InstallError as exc:
        raise InstallError(f"{path}: {exc}; rondo leaves it as it is") from None
    replaced = name in servers
    servers[name] = entry
    backup = write_config(path, doc)
    verb = "replaced" if replaced else "added"
    kept = f" (the previous file is {backup})" if backup is not None else ""
    after = "point your host at it" if host == "mcp-json" else f"restart {NAMES[host]} to load it"
    print(f"rondo: {verb} {name!r} in {path}{kept}; {after}",
          file=sys.stderr)
    return 0
