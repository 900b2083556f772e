"""`mcp.json`: the file MCP hosts keep their servers in, read into typed entries.

    {"mcpServers": {
        "files":   {"command": "npx", "args": ["-y", "some-server"], "env": {"ROOT": "/srv"}},
        "weather": {"url": "https://weather.example/mcp",
                    "headers": {"Authorization": "Bearer ${WEATHER_TOKEN}"}, "timeout": 10}}}

Each entry is a stdio command (`command`, `args`, `env`, `cwd`) or a URL (`url`, `headers`;
`type` "http"/"streamable-http" or "sse"); `timeout` (seconds) and `bridge` ("hold",
"replay" or "none": how a gateway bridges that server's mid-call questions) are rondo's own keys. `servers`
(VS Code's key) is read as `mcpServers`. `${NAME}` and `${NAME:-default}` in any string are
taken from the environment, so secrets stay out of the file. An entry with `"disabled": true`
is skipped; a few keys hosts keep for themselves (`description`, `autoApprove`...) are ignored;
any other key is refused, so a typo fails at start-up instead of being dropped.

Errors (`ConfigError`) name the server and the field, never a value: an env value, a header or
a URL (which may hold a token) is not echoed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["ConfigError", "ServerEntry", "load_mcp_json"]

Kind = Literal["stdio", "http", "sse"]
_TYPES: dict[str, Kind] = {"stdio": "stdio", "http": "http", "streamable-http": "http",
                           "streamableHttp": "http", "sse": "sse"}
_KEYS = {"type", "command", "args", "env", "cwd", "url", "headers", "timeout", "disabled",
         "bridge"}
_BRIDGES = ("hold", "replay", "none")
_HOST_KEYS = {"description", "autoApprove", "alwaysAllow", "gallery", "dev", "trust",
              "includeTools", "excludeTools"}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_MAX_FILE = 1024 * 1024  # an mcp.json is a few kilobytes; a megabyte is a mistake


class ConfigError(ValueError):
    """An mcp.json that cannot be served as written (the message names where, not values)."""


@dataclass(frozen=True)
class ServerEntry:
    """One server of an mcp.json. `target` is what `rondo.Client` and `rondo.proxy` take."""

    name: str
    kind: Kind
    url: str | None = None
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float | None = None
    bridge: str | None = None  # "hold", "replay", "none", or None: the gateway's own choice

    @property
    def target(self) -> str | list[str]:
        """The URL, or the command line with its arguments."""
        return self.url if self.url is not None else list(self.command)


def load_mcp_json(source: str | os.PathLike[str] | Mapping[str, Any], *,
                  environ: Mapping[str, str] | None = None) -> dict[str, ServerEntry]:
    """The enabled servers of an mcp.json (a path, or the parsed document), by name, in file
    order. `environ` (default `os.environ`) answers `${NAME}`. Raises `ConfigError`."""
    document: Any
    if isinstance(source, Mapping):
        document = source
    elif not isinstance(source, str | os.PathLike):
        raise ConfigError("an mcp.json is a JSON object holding \"mcpServers\"")
    else:
        path = Path(source)
        try:
            with path.open("rb") as handle:
                raw = handle.read(_MAX_FILE + 1)
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
        if len(raw) > _MAX_FILE:
            raise ConfigError(f"{path} is larger than {_MAX_FILE} bytes")
        try:
            document = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(
                exc, json.JSONDecodeError) else ""
            raise ConfigError(f"{path} is not JSON{where}") from None
    if not isinstance(document, Mapping):
        raise ConfigError("an mcp.json is a JSON object holding \"mcpServers\"")
    servers = document.get("mcpServers", document.get("servers"))
    if not isinstance(servers, Mapping):
        raise ConfigError("an mcp.json needs an object \"mcpServers\" (or \"servers\") naming "
                          "each server")
    env = os.environ if environ is None else environ
    out: dict[str, ServerEntry] = {}
    for name, entry in servers.items():
        if not isinstance(name, str) or not name:
            raise ConfigError("each server in mcpServers needs a non-empty name")
        parsed = _entry(name, entry, env)
        if parsed is not None:
            out[name] = parsed
    return out


def _entry(name: str, entry: Any, environ: Mapping[str, str]) -> ServerEntry | None:
    where = f"server {name!r}"
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: an entry is an object (command/args/env or url/headers)")
    if entry.get("disabled") is True:
        return None
    unknown = sorted(str(k) for k in entry if k not in _KEYS and k not in _HOST_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: "
                          f"{', '.join(sorted(_KEYS))})")
    kind_text = entry.get("type")
    if kind_text is not None and kind_text not in _TYPES:
        raise ConfigError(f"{where}: type must be one of {', '.join(_TYPES)}")
    has_url, has_command = "url" in entry, "command" in entry
    if has_url == has_command:
        raise ConfigError(f"{where}: give either \"command\" (stdio) or \"url\" (HTTP), "
                          "not both or neither")
    kind: Kind = _TYPES[kind_text] if kind_text is not None else (
        "stdio" if has_command else "http")
    if (kind == "stdio") != has_command:
        raise ConfigError(f"{where}: type {kind_text!r} does not go with "
                          f"{'command' if has_command else 'url'}")

    def text(value: Any, field_name: str) -> str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: {field_name} must be a string")
        return _expand(value, environ, f"{where}: {field_name}")

    def strings(value: Any, field_name: str) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: {field_name} must be an object of strings")
        return {str(k): text(v, f"{field_name}.{k}") for k, v in value.items()}

    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not 0 < timeout <= 3600):
        raise ConfigError(f"{where}: timeout must be a number of seconds, more than 0 and at "
                          "most 3600")
    bridge = entry.get("bridge")
    if bridge is not None and bridge not in _BRIDGES:
        raise ConfigError(f"{where}: bridge must be one of {', '.join(_BRIDGES)}")
    if has_url:
        for key in ("args", "env", "cwd"):
            if key in entry:
                raise ConfigError(f"{where}: {key} goes with command, not url")
        url = text(entry["url"], "url")
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}: url must start with http:// or https://")
        headers = strings(entry.get("headers"), "headers")
        for key, value in headers.items():
            if not key or any(c in key for c in " \t\r\n:") or "\n" in value or "\r" in value:
                raise ConfigError(f"{where}: header {key!r} is not a valid header")
        return ServerEntry(name, kind, url=url, headers=headers,
                           timeout=None if timeout is None else float(timeout), bridge=bridge)
    if "headers" in entry:
        raise ConfigError(f"{where}: headers go with url, not command")
    command = text(entry["command"], "command").strip()
    if not command:
        raise ConfigError(f"{where}: command is empty")
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise ConfigError(f"{where}: args must be a list of strings")
    argv = (command, *(text(arg, f"args[{i}]") for i, arg in enumerate(args)))
    cwd = entry.get("cwd")
    return ServerEntry(name, "stdio", command=argv, env=strings(entry.get("env"), "env"),
                       cwd=None if cwd is None else text(cwd, "cwd"),
                       timeout=None if timeout is None else float(timeout), bridge=bridge)


def _expand(value: str, environ: Mapping[str, str], where: str) -> str:
    def one(match: re.Match[str]) -> str:
        found = environ.get(match.group(1))
        if found is not None:
            return found
        if match.group(2) is not None:
            return match.group(2)
        raise ConfigError(f"{where} names ${{{match.group(1)}}}, which is not set")

    return _VARIABLE.sub(one, value)
