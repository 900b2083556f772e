"""`rondo dev APP.py[:SERVER]`: a local page to try a server, answering its questions in forms.

One process: the server file is loaded, a `rondo.Client` talks to it in memory, and a small
ASGI app on loopback serves the page (`dev_page.py`, no build step, no CDN) and the endpoint
the page drives (`POST /api/OP`). The endpoint holds the client; so that no other site in the
browser can drive it, every API request must

- name a loopback Host (DNS rebinding: another site's name resolving to 127.0.0.1 is refused),
- come from the page's own origin when it carries an `Origin` (a cross-site fetch is refused,
  and its custom header would need a preflight this app never answers),
- carry the per-run secret in `X-Rondo-Dev-Secret` (the page reads it from the URL's fragment,
  which browsers never send to a server or put in a Referer).

What the server asks while a call runs (a form or URL elicitation, a sampling request, the
roots) is parked until the page answers it: the page polls `pending`, which also hands it what
happened since its last look (progress, log messages, task status changes), and posts
`answer`. The target is a server file (loaded here, talked to in memory), a URL or a command.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import itertools
import json
import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from ..transport.http.inbound import LOOPBACK_HOSTS, hostname

Json = dict[str, Any]
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

SECRET_HEADER = b"x-rondo-dev-secret"
MAX_BODY = 1 << 20
CSP = (b"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       b"connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
       b"frame-ancestors 'none'")


MAX_EVENTS = 500  # what the page has not collected yet is kept up to this many


class Bridge:
    """The client the page drives, the questions waiting for the page's answers, and what
    happened since the page last looked."""

    def __init__(self, target: Any, auth: Any = None, *, apps: bytes | None = None,
                 protocol: str | None = None) -> None:
        self.auth = auth  # sign-in for a protected HTTP server (rondo.client.OAuth)
        self.apps = apps  # the ext-apps host bridge bundle: views are hosted when given
        self.protocol = protocol  # a pinned protocol version (else the client probes)
        self.views: dict[str, Any] = {}  # view id -> dev_apps.View, for its sandbox to fetch
        self.client = self._client_for(target)
        self.pending: dict[str, tuple[Json, asyncio.Future[Json]]] = {}
        self._ids = itertools.count(1)
        self.events: list[Json] = []
        self._seq = itertools.count(1)
        self.roots: list[str] = []
        self.tasks: dict[str, Json] = {}  # task id -> its last status, as the page lists them

    def event(self, kind: str, **fields: Any) -> None:
        self.events.append({"seq": next(self._seq), "kind": kind, **fields})
        del self.events[:-MAX_EVENTS]

    def _notified(self, message: Json) -> None:
        if message.get("method") == "notifications/message":
            params = message.get("params") or {}
            self.event("log", level=params.get("level"), logger=params.get("logger"),
                       data=params.get("data"))

    def _task_status(self, task: Json) -> None:
        task_id = task.get("taskId")
        if isinstance(task_id, str):
            self.tasks[task_id] = {"taskId": task_id, "status": task.get("status"),
                                   "message": task.get("statusMessage")}
            while len(self.tasks) > MAX_EVENTS:
                del self.tasks[next(iter(self.tasks))]
        self.event("task", taskId=task.get("taskId"), status=task.get("status"),
                   message=task.get("statusMessage"))

    def _progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.event("progress", progress=progress, total=total, message=message)

    async def _ask(self, shown: Json) -> Json:
        ask_id = f"q{next(self._ids)}"
        shown["id"] = ask_id
        future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self.pending[ask_id] = (shown, future)
        try:
            return await future
        finally:
            self.pending.pop(ask_id, None)

    async def _sample(self, request: Any) -> Json:
        """A sampling request, answered by a person typing the model's reply."""
        answer = await self._ask({"kind": "sample", "messages": request.messages,
                                  "systemPrompt": request.system_prompt,
                                  "maxTokens": request.max_tokens})
        if answer.get("refuse"):
            raise RuntimeError("the person at the page refused to write the reply")
        return answer

    async def _roots(self) -> Any:
        """The roots, as an editable list (the last one given is offered again)."""
        answer = await self._ask({"kind": "roots", "roots": list(self.roots)})
        roots = answer.get("roots")
        if isinstance(roots, list):
            self.roots = [r["uri"] for r in roots if isinstance(r, dict) and isinstance(r.get("uri"), str)]
        return answer

    def _client_for(self, target: Any) -> Any:
        from ..client.halves import client_half
        from ..client.session import Client

        extensions: list[Any] = []
        if self.apps is not None:  # declared: the server lists the tools only views call
            from ..apps.client import AppsClient

            extensions.append(AppsClient())
        return Client(target, name="rondo-dev", on_elicit=self._elicit, on_sample=self._sample,
                      on_roots=self._roots, elicit_modes=("form", "url"), timeout=None,
                      protocol=self.protocol, extensions=extensions,
                      log_level="info", on_notification=self._notified,
                      tasks=client_half("tasks").TasksClient(on_status=self._task_status),
                      auth=self.auth if isinstance(target, str) else None)

    async def swap(self, target: Any) -> None:
        """Talk to `target` from now on (a reloaded server): questions still open are dropped,
        the old client closed once the new one is connected."""
        new = self._client_for(target)
        await new.__aenter__()
        self.views.clear()
        old, self.client = self.client, new
        for _, future in list(self.pending.values()):
            future.cancel()
        await old.__aexit__(None, None, None)

    async def __aenter__(self) -> Bridge:
        await self.client.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        for _, future in self.pending.values():
            future.cancel()
        await self.client.__aexit__(*exc)

    async def _elicit(self, request: Any) -> Json:
        shown: Json = {"kind": "elicit", "mode": request.mode, "message": request.message}
        if request.mode == "url":
            shown["url"] = request.url
        else:
            shown["schema"] = request.requested_schema or {"type": "object", "properties": {}}
        return await self._ask(shown)

    async def op(self, name: str, body: Json, host: str = "127.0.0.1") -> Json:
        """One API operation; what the page (at `host`) gets back as JSON."""
        client = self.client
        if name == "offer":
            return {"server": client.server_info, "apps": self.apps is not None,
                    "era": client.era,
                    "tools": [_plain(t) for t in await client.list_tools()],
                    "resources": [_plain(r) for r in await _maybe(client.list_resources)],
                    "templates": [_plain(t) for t in await _maybe(client.list_resource_templates)],
                    "prompts": [_plain(p) for p in await _maybe(client.list_prompts)]}
        if name == "view":
            return await self._view(body, host)
        if name == "call":
            tool, arguments = body.get("name"), body.get("arguments") or {}
            if not isinstance(tool, str) or not isinstance(arguments, dict):
                raise ValueError("call needs a tool name and an arguments object")
            if body.get("view") is not None:  # what the view's bridge hands on: no nulls
                await self._check_view_call(body["view"], tool)
                answer: Json = _bare(_result(await client.call_tool(tool, arguments,
                                                                    on_progress=self._progress)))
                return answer
            return _result(await client.call_tool(tool, arguments, on_progress=self._progress))
        if name == "read":
            uri = body.get("uri")
            if not isinstance(uri, str):
                raise ValueError("read needs a uri")
            read = _result(await client.read_resource(uri))
            if body.get("view") is not None:
                read = _bare(read)
            return read
        if name == "prompt":
            prompt, arguments = body.get("name"), body.get("arguments") or {}
            if not isinstance(prompt, str) or not isinstance(arguments, dict):
                raise ValueError("prompt needs a name and an arguments object")
            return _result(await client.get_prompt(prompt, {k: str(v) for k, v in arguments.items()}))
        if name == "pending":
            since = body.get("since", 0)
            since = since if isinstance(since, int) else 0
            return {"questions": [shown for shown, _ in self.pending.values()],
                    "events": [e for e in self.events if e["seq"] > since],
                    "tasks": list(self.tasks.values())}
        if name == "cancel_task":
            task_id = body.get("taskId")
            if not isinstance(task_id, str) or task_id not in self.tasks:
                raise ValueError("cancel_task needs the id of a task this page started")
            await client.task(task_id).cancel()
            return {"ok": True}
        if name == "answer":
            ask_id, response = body.get("id"), body.get("response")
            waiting = self.pending.get(ask_id) if isinstance(ask_id, str) else None
            if waiting is None or not isinstance(response, dict):
                raise ValueError("answer needs the id of a pending question and a response object")
            if not waiting[1].done():
                waiting[1].set_result(response)
            return {"ok": True}
        raise LookupError(name)

    async def _view(self, body: Json, host: str) -> Json:
        """The view a tool links, read and checked, kept for its sandbox to fetch."""
        from ..apps.client import tool_view
        from .dev_apps import MAX_VIEWS, sandbox_host
        from .dev_apps import host as hosted

        if self.apps is None:
            raise ValueError("views are not hosted: start rondo dev with --apps-bridge")
        name = body.get("tool")
        if not isinstance(name, str):
            raise ValueError("view needs a tool's name")
        linked = await tool_view(self.client, name)  # AppsError (a ValueError) says what is wrong
        if linked is None:
            raise ValueError(f"the tool {name!r} links no view")
        view = hosted(linked, f"http://{host}")
        self.views[view.id] = view
        while len(self.views) > MAX_VIEWS:
            del self.views[next(iter(self.views))]
        tool = next(_bare(_plain(t)) for t in await self.client.list_tools() if t.name == name)
        return {"id": view.id, "uri": view.uri, "html": view.html, "tool": tool,
                "csp": linked.meta.csp.wire() if linked.meta.csp is not None else {},
                "prefersBorder": linked.meta.prefers_border,
                "sandbox": f"http://{sandbox_host(host)}/apps/sandbox/{view.id}"}

    async def _check_view_call(self, view_id: Any, tool_name: str) -> None:
        """A view may call only tools whose visibility includes "app" (the host's rule)."""
        from ..apps.meta import tool_visibility

        if not isinstance(view_id, str) or view_id not in self.views:
            raise ValueError("call from an unknown view")
        tool = next((t for t in await self.client.list_tools() if t.name == tool_name), None)
        if tool is None:
            raise ValueError(f"no tool {tool_name!r}")
        # The tool's own visibility, whether or not it names a view (a model-only tool need not).
        visibility = tool_visibility(tool.meta)
        if "app" not in visibility:
            raise ValueError(f"the tool {tool_name!r} is not visible to views (visibility "
                             f"{list(visibility)})")


async def _maybe(listing: Callable[[], Awaitable[list[Any]]]) -> list[Any]:
    from ..wire.errors import McpError

    try:
        return await listing()
    except McpError:
        return []  # a capability the server does not have


def _plain(value: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(value)


def _bare(value: Any) -> Any:
    """`value` without the null members a schema-checking peer refuses (absent, not null)."""
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value


def _result(value: Any) -> Json:
    plain: Json = _plain(value)
    return plain


class DevApp:
    """The page and its endpoint (ASGI), in front of a `Bridge`."""

    def __init__(self, bridge: Bridge, secret: str) -> None:
        self.bridge = bridge
        self.secret = secret.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {k.lower(): v for k, v in scope["headers"]}
        host = headers.get(b"host", b"").decode("latin-1")
        if hostname(host) not in LOOPBACK_HOSTS:  # the HTTP endpoint's own host rule
            await _reply(send, 403, {"error": "this page answers on loopback names only"})
            return
        method, path = scope["method"], scope["path"]
        if method == "GET" and path == "/":
            from .dev_page import PAGE

            await _send(send, 200, PAGE.encode(), b"text/html; charset=utf-8",
                        [(b"content-security-policy", self._page_csp(host)),
                         (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY")])
            return
        if method == "GET" and path.startswith("/apps/") and self.bridge.apps is not None:
            await self._apps_get(send, path, host)
            return
        if method != "POST" or not path.startswith("/api/"):
            await _reply(send, 404, {"error": "not found"})
            return
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1") != f"http://{host}":
            await _reply(send, 403, {"error": "requests from another origin are refused"})
            return
        given = headers.get(SECRET_HEADER, b"")
        if not hmac.compare_digest(given, self.secret):
            await _reply(send, 403, {"error": "the per-run secret is missing or wrong"})
            return
        body = await _body(receive)
        if body is None:
            await _reply(send, 413, {"error": "request body too large"})
            return
        try:
            data = json.loads(body or b"{}")
            if not isinstance(data, dict):
                raise ValueError("the body must be a JSON object")
            answer = await self.bridge.op(path[len("/api/"):], data, host)
        except LookupError:
            await _reply(send, 404, {"error": f"no operation {path[len('/api/'):]!r}"})
            return
        except (ValueError, json.JSONDecodeError) as exc:
            await _reply(send, 400, {"error": str(exc)})
            return
        except Exception as exc:  # what the server or the client said: shown on the page
            await _reply(send, 200, {"failed": f"{type(exc).__name__}: {exc}"})
            return
        await _reply(send, 200, answer)

    def _page_csp(self, host: str) -> bytes:
        if self.bridge.apps is None:
            return CSP
        from .dev_apps import sandbox_host

        # the bridge bundle from this origin; views only in frames from the sandbox's origin
        return CSP.replace(b"script-src ", b"script-src 'self' ").replace(
            b"frame-ancestors", b"frame-src http://" + sandbox_host(host).encode() + b"; frame-ancestors")

    async def _apps_get(self, send: Send, path: str, host: str) -> None:
        """The host bridge bundle, the sandbox proxy's script, and a view's sandbox document
        (served only on the sandbox's own origin, under the view's CSP)."""
        from .dev_apps import SANDBOX_SCRIPT, sandbox_host, sandbox_page

        js = b"text/javascript; charset=utf-8"
        if path == "/apps/bridge.js":
            assert self.bridge.apps is not None
            await _send(send, 200, self.bridge.apps, js, [(b"x-content-type-options", b"nosniff")])
            return
        if path == "/apps/sandbox.js":
            await _send(send, 200, SANDBOX_SCRIPT, js, [(b"x-content-type-options", b"nosniff")])
            return
        view = self.bridge.views.get(path[len("/apps/sandbox/"):]) if path.startswith("/apps/sandbox/") else None
        if view is None or host != sandbox_host(view.page[len("http://"):]):
            await _reply(send, 404, {"error": "no such view here"})
            return
        await _send(send, 200, sandbox_page(view.page), b"text/html; charset=utf-8",
                    [(b"content-security-policy", view.csp.encode()),
                     (b"referrer-policy", b"no-referrer"), (b"x-content-type-options", b"nosniff")])



async def _body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _reply(send: Send, status: int, body: Any) -> None:
    await _send(send, status, json.dumps(body).encode(), b"application/json", [])


async def _send(send: Send, status: int, body: bytes, kind: bytes,
                extra: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"), *extra]})
    await send({"type": "http.response.body", "body": body})


class Reloader:
    """Loads the server file again when it changes and swaps the bridge onto the new server
    (its lifespan hooks started first, the old server's stopped after). A file that fails to
    load leaves the running server as it was and says why on the page."""

    def __init__(self, target: str, bridge: Bridge, running: contextlib.AsyncExitStack) -> None:
        from pathlib import Path

        self.target = target
        self.path = Path(target.rsplit(":", 1)[0] if target.count(":") == 1 else target)
        self.bridge = bridge
        self.running = running  # the current server's lifespan
        self.seen = self._stamp()

    def _stamp(self) -> int:
        try:
            return self.path.stat().st_mtime_ns
        except OSError:
            return 0

    async def check(self) -> bool:
        """Reload if the file changed since the last look; True when the server was swapped."""
        stamp = self._stamp()
        if stamp == self.seen:
            return False
        self.seen = stamp
        from ..fleet.loader import load_server

        try:
            server = load_server(self.target)
        except (Exception, SystemExit) as exc:
            self.bridge.event("reload", ok=False, error=f"{type(exc).__name__}: {exc}")
            return False
        running = contextlib.AsyncExitStack()
        await running.enter_async_context(server.started())
        await self.bridge.swap(server)
        await self.running.aclose()
        self.running = running
        self.bridge.event("reload", ok=True, name=server.name)
        return True

    async def watch(self, interval: float = 0.5) -> None:
        try:
            while True:
                await asyncio.sleep(interval)
                await self.check()
        finally:
            await self.running.aclose()


def dev_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="rondo dev",
        description="A local page to try a server file: its tools as forms, results, and the "
                    "server's questions answered in the page. Loopback only, with a per-run secret.")
    parser.add_argument("app", metavar="TARGET", help="a server file (APP.py[:SERVER], loaded "
                        "here), a server's URL, or the command that starts one (stdio)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="only print the page's URL "
                        "(and a sign-in URL)")
    parser.add_argument("--protocol", metavar="VERSION", help="pin the protocol version the page's "
                        "client speaks (e.g. 2025-11-25; default: probe, newest first)")
    parser.add_argument("--apps-bridge", metavar="FILE", help="host tools' views (MCP Apps) through "
                        "this browser bundle of @modelcontextprotocol/ext-apps/app-bridge (default: "
                        "$RONDO_APPS_BRIDGE; see docs/apps.md, Hosting views)")
    sign_in = parser.add_argument_group("signing in to a protected HTTP server (OAuth), as rondo call does")
    sign_in.add_argument("--token-store", metavar="FILE",
                         help="where tokens are kept (default ~/.local/state/rondo/tokens.json)")
    sign_in.add_argument("--client-id", help="a pre-registered client id (secret from $RONDO_CLIENT_SECRET)")
    sign_in.add_argument("--no-auth", action="store_true", help="never sign in")
    args = parser.parse_args(argv)
    import os

    from .dev_apps import ENV_BRIDGE, ViewError, bridge_version, load_bridge

    if args.protocol is not None:
        from ..wire.meta import LEGACY_VERSIONS, MODERN_VERSIONS

        if args.protocol not in (*MODERN_VERSIONS, *LEGACY_VERSIONS):
            print(f"rondo dev: unknown protocol version {args.protocol!r} (known: "
                  f"{', '.join((*MODERN_VERSIONS, *LEGACY_VERSIONS))})", file=sys.stderr)
            return 2
    apps: bytes | None = None
    bridge_file = args.apps_bridge or os.environ.get(ENV_BRIDGE)
    if bridge_file:
        try:
            apps = load_bridge(bridge_file)
        except ViewError as exc:
            print(f"rondo dev: {exc}", file=sys.stderr)
            return 2
        print(f"rondo dev: hosting views with ext-apps {bridge_version(apps) or '(version not named)'} "
              f"from {bridge_file}", file=sys.stderr)
    server: Any = None
    target: Any = args.app
    if not is_served_elsewhere(args.app):
        from ..fleet.loader import load_server

        try:
            server = target = load_server(args.app)
        except SystemExit as exc:
            print(exc, file=sys.stderr)
            return 2
    elif not args.app.startswith(("http://", "https://")):
        import shlex

        target = shlex.split(args.app)
    from ..client.errors import ClientError
    from ..wire.errors import McpError

    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(server, target, args.port, not args.no_browser, args.app,
                               _auth(args, target), apps=apps, protocol=args.protocol))
    except (ClientError, McpError, OSError) as exc:
        print(f"rondo dev: cannot reach the server: {exc}", file=sys.stderr)
        return 1
    return 0


def is_served_elsewhere(target: str) -> bool:
    """A URL or a command line, not a server file to load here."""
    if target.startswith(("http://", "https://")):
        return True
    path = target.rsplit(":", 1)[0] if target.count(":") == 1 else target
    return not path.endswith(".py") or " " in target.strip()


def has_display(environ: Any = None, platform: str = sys.platform) -> bool:
    """Is there a screen to open a browser on? (macOS and Windows always; elsewhere X or Wayland.)"""
    import os

    env = os.environ if environ is None else environ
    return platform in ("darwin", "win32") or bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def _auth(args: argparse.Namespace, target: Any) -> Any:
    """Sign-in for an HTTP target: the URL is printed (and opened in a browser unless
    --no-browser), the redirect caught on 127.0.0.1, the token kept for the next run."""
    if args.no_auth or not (isinstance(target, str) and target.startswith(("http://", "https://"))):
        return None
    import os

    from ..client.auth import FileTokenStore, LoopbackRedirect, OAuth

    store = FileTokenStore(args.token_store) if args.token_store else FileTokenStore.default()
    secret = os.environ.get("RONDO_CLIENT_SECRET") if args.client_id else None
    return OAuth(redirect=LoopbackRedirect(open_browser=not args.no_browser), store=store,
                 client_id=args.client_id, client_secret=secret, client_name="rondo dev")


async def _serve(server: Any, target: Any, port: int, browser: bool, source: str | None = None,
                 auth: Any = None, *, apps: bytes | None = None, protocol: str | None = None) -> None:
    import socket

    import uvicorn

    secret = secrets.token_urlsafe(24)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", port))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/#secret={secret}"
    async with contextlib.AsyncExitStack() as stack:
        running = contextlib.AsyncExitStack()
        if server is not None:
            await running.enter_async_context(server.started())
        bridge = await stack.enter_async_context(Bridge(target, auth, apps=apps, protocol=protocol))
        if server is not None and isinstance(source, str):
            watcher = asyncio.ensure_future(Reloader(source, bridge, running).watch())
            stack.callback(watcher.cancel)
        config = uvicorn.Config(DevApp(bridge, secret), log_level="warning", lifespan="off")
        name = (bridge.client.server_info or {}).get("name", "server")
        print(f"rondo dev: {name} at {url}", file=sys.stderr, flush=True)
        if browser and has_display():
            import webbrowser

            webbrowser.open(url)
        await uvicorn.Server(config).serve(sockets=[sock])
