"""stdio client transport: spawn the server, one JSON message per line each way.

The environment is passed explicitly: the child gets a short list of safe variables from ours
(PATH, HOME, ...) plus whatever `env` names, never our whole environment. A line that is not
JSON, or a response to an id we never sent, fails every pending request with a ProtocolError:
after that the stream cannot be trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from rondo.client.errors import ProtocolError, TransportError
from rondo.client.limits import (
    CLOSE_GRACE,
    DEFAULT_MAX_SERVER_REQUESTS,
    EXIT_GRACE,
    ServerRequestGate,
    take_incoming,
)
from rondo.client.transports import Incoming, Json, answered, is_response

from ...wire.errors import DECODE_ERRORS

_SAFE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR",
             "SYSTEMROOT", "TEMP", "TMP", "USERPROFILE", "APPDATA", "PATHEXT", "COMSPEC")
_LINE_LIMIT = 64 * 1024 * 1024
_RECENT_IDS = 256
_STDERR_LINE = 4096


def child_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """The child's environment: the safe variables we have, overlaid with `env`."""
    out = {k: os.environ[k] for k in _SAFE_ENV if k in os.environ}
    out.update(env or {})
    return out


class StdioTransport:
    name = "stdio"
    carries_headers = False

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: Any = None,
        max_server_requests: int = DEFAULT_MAX_SERVER_REQUESTS,
        new_session: bool = False,
    ) -> None:
        if not command:
            raise ValueError("stdio transport needs a command")
        self.command = list(command)
        self.env = child_env(env)
        self.cwd = cwd
        # A callable takes each line the server writes on stderr (decoded, at most
        # _STDERR_LINE characters); anything else is handed to the process as its stderr.
        self.stderr = stderr
        self._stderr_reader: asyncio.Task[None] | None = None
        # True starts the server in a session of its own: a terminal's Ctrl-C reaches only us.
        self.new_session = new_session
        self.legacy_version: str | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[Any, asyncio.Future[Json]] = {}
        self._recent: list[Any] = []  # ids answered or given up on; late answers are ignored
        self._failure: Exception | None = None
        self._write_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._on_incoming: Incoming | None = None
        self._gate = ServerRequestGate(max_server_requests)

    async def start(self, on_incoming: Incoming) -> None:
        self._on_incoming = on_incoming
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE if callable(self.stderr) else self.stderr,
                env=self.env,
                cwd=self.cwd,
                limit=_LINE_LIMIT,
                start_new_session=self.new_session,
            )
        except OSError as exc:
            raise TransportError(f"cannot start {self.command[0]!r}: {exc}") from exc
        self._reader = asyncio.create_task(self._read_loop())
        if callable(self.stderr) and self._proc.stderr is not None:
            self._stderr_reader = asyncio.create_task(self._pass_stderr(self._proc.stderr))

    async def wait_ended(self) -> None:
        """Return once the server's stdout has ended (it exited, or wrote what cannot be
        trusted): every request since fails, and the transport is spent."""
        reader = self._reader
        if reader is not None:
            await asyncio.wait([reader])

    async def _pass_stderr(self, stream: asyncio.StreamReader) -> None:
        handler = self.stderr
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line past the stream's limit: skip what is buffered
                continue
            if not line:
                return
            with contextlib.suppress(Exception):  # a failing handler must not stop the reader
                handler(line[:_STDERR_LINE].decode("utf-8", "replace").rstrip())

    async def request(self, message: Json, headers: Mapping[str, str] | None = None) -> Json:
        self._check_open()
        try:
            return await answered(self._pending, message, self._write)
        finally:
            self._remember(message["id"])

    async def after_handshake(self) -> None:
        return None

    async def notify(self, message: Json) -> None:
        self._check_open()
        await self._write(message)

    async def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 2.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 2.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        for reader in (self._reader, self._stderr_reader):
            if reader is not None:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await reader
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:  # bounded: a handler that ignores cancellation does not hold close() up
            await asyncio.wait(tasks, timeout=CLOSE_GRACE)
        self._fail_all(TransportError("transport closed"))

    # -- internals -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._proc is None:
            raise TransportError("stdio transport is not running")

    async def _write(self, message: Json) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise TransportError("stdio transport is not running")
        data = msgspec.json.encode(message) + b"\n"
        async with self._write_lock:
            try:
                proc.stdin.write(data)
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise await self._write_failure(proc, exc) from exc

    async def _write_failure(self, proc: Any, exc: Exception) -> TransportError:
        """Why a write failed. A server that exits closes its stdin too, and the write can
        find that out before the reader sees its stdout end: then say it exited, as the reader
        would, and not only that its stdin is closed."""
        with contextlib.suppress(asyncio.TimeoutError):
            code = await asyncio.wait_for(proc.wait(), EXIT_GRACE)
            return TransportError(f"server process exited (code {code}) before answering")
        return TransportError(f"server process closed its stdin: {exc}")

    def _remember(self, rid: Any) -> None:
        self._recent.append(rid)
        if len(self._recent) > _RECENT_IDS:
            del self._recent[: len(self._recent) - _RECENT_IDS]

    def _fail_all(self, exc: Exception) -> None:
        if self._failure is None:
            self._failure = exc
        for future in self._pending.values():
            if not future.done():
                future.set_exception(exc)

    async def _read_loop(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        stdout = proc.stdout
        try:
            while True:
                try:
                    line = await stdout.readline()
                except ValueError:
                    self._fail_all(ProtocolError("server wrote a line longer than the limit"))
                    return
                if not line:
                    break
                if not line.strip():
                    continue
                try:
                    message = msgspec.json.decode(line)
                except DECODE_ERRORS:
                    shown = line[:120].decode("utf-8", "replace").rstrip()
                    self._fail_all(ProtocolError(f"server wrote malformed JSON on stdout: {shown!r}"))
                    return
                if not isinstance(message, dict):
                    self._fail_all(ProtocolError("server wrote a JSON value that is not a message"))
                    return
                await self._route(message)
        except asyncio.CancelledError:
            raise
        code = await proc.wait() if proc.returncode is None else proc.returncode
        self._fail_all(TransportError(f"server process exited (code {code}) before answering"))

    async def _route(self, message: Json) -> None:
        if is_response(message):
            rid = message.get("id")
            future = self._pending.get(rid)
            if future is not None:
                if not future.done():
                    future.set_result(message)
            elif rid not in self._recent:
                self._fail_all(ProtocolError(f"server answered id {rid!r}, which this client never sent"))
            return
        if "method" not in message:
            self._fail_all(ProtocolError("server wrote a message that is neither a response nor a request"))
            return
        assert self._on_incoming is not None
        await take_incoming(self._gate, message, self._on_incoming, self._write, self._tasks,
                            TransportError)
