"""The typed lane: a plain `tools/call` checked and decoded by one pass of msgspec's decoder.

The express lane (`express.py`) starts from a decoded dict and checks the JSON-RPC shape, the
`_meta` envelope and the arguments in Python, one after the other. For a tool that takes no
`Context` all of those checks can be said as one msgspec type: a request whose `params` is a
union tagged by the tool's name, each member holding the `_meta` fields the envelope requires
and that tool's own argument Struct. One `decode` then makes every check and hands back typed
values.

It never refuses anything itself. A message the type does not accept (another method, a key
it does not know, a retry, a wrong type, a notification) gets None, and the caller decodes it
as a dict and takes the usual path, which gives whatever answer that path gives. A tool whose
arguments msgspec would read differently from JSON than from a decoded dict (a dict with
integer keys, `msgspec.Raw`, anything with a decode hook) is left out of the union.
`tests/core/test_typed_lane.py` holds both lanes to the same bytes.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import types
import typing
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

import msgspec
from msgspec.structs import asdict as _asdict

from ..mrtr.result import InputRequired
from ..server.request import Emit
from ..wire.meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    LOG_LEVELS,
    MODERN_VERSIONS,
    PROTOCOL_VERSION,
)
from .express import ask_without_context, run_bound

if TYPE_CHECKING:
    from ..server.components import Tool
    from .core import Core

_decode = msgspec.json.decode


class Meta(msgspec.Struct):
    """The `_meta` fields `wire.envelope.envelope` and `check_version` require, as a type."""

    version: Literal[MODERN_VERSIONS] = msgspec.field(name=PROTOCOL_VERSION)  # type: ignore[valid-type]
    capabilities: dict[str, Any] = msgspec.field(name=CLIENT_CAPABILITIES)
    client_info: Union[dict[str, Any], None] = msgspec.field(name=CLIENT_INFO, default=None)  # noqa: UP007
    log_level: Union[Literal[LOG_LEVELS], None] = msgspec.field(name=LOG_LEVEL, default=None)  # type: ignore[valid-type]  # noqa: UP007


class TypedCalls:
    """The decoder for one server's plain tools, built from its tool table as it stands."""

    __slots__ = ("_core", "_decoder", "_tools", "header_names")

    def __init__(self, core: Core) -> None:
        self._core = core
        # By the params type of its union member; None for a tool the usual path answers.
        self._tools: dict[type, Tool | None] = {}
        # The `Mcp-Name` values that can name a typed tool: HTTP decodes nothing else this way.
        self.header_names: set[bytes] = set()
        for name, tool in core.server.tools.items():
            if qualifies(tool) and not (core.claims and core.takes(tool)):
                member = msgspec.defstruct(
                    "ToolParams", [("meta", Meta, msgspec.field(name="_meta")),
                                   ("arguments", Union[tool.signature._struct, None], None)],  # noqa: UP007
                    tag_field="name", tag=name, forbid_unknown_fields=True)
                self._tools[member] = tool
                if tool.header_name is not None:
                    self.header_names.add(tool.header_name)
            else:
                # Named, its other fields skipped unread: a call of it is found out sooner,
                # and more cheaply, than by a failed decode.
                self._tools[msgspec.defstruct("OtherParams", [], tag_field="name", tag=name)] = None
        self._decoder: msgspec.json.Decoder[Any] | None = None
        if any(self._tools.values()):
            call = msgspec.defstruct("ToolCall", [
                ("jsonrpc", Literal["2.0"]), ("id", Union[int, str]),  # noqa: UP007
                ("method", Literal["tools/call"]), ("params", Union[tuple(self._tools)]),  # noqa: UP007
            ], forbid_unknown_fields=True)
            self._decoder = msgspec.json.Decoder(call)

    def answer(
        self, body: bytes, emit: Emit, auth: Any = None,
        routing: tuple[bytes, str | None] | None = None,
        allows: Callable[[str, Any], bool] | None = None, peer: Any = None,
    ) -> dict[str, Any] | None:
        """The JSON-RPC response to `body` if this lane takes it; None: the usual path answers.

        Also None when the tool was replaced or removed since this lane was built, or takes no
        arguments and refuses the ones it was (not) given. `routing` is HTTP's plain `Mcp-Name`
        and `MCP-Protocol-Version` header values: the call must match both (then every header
        check passes) or it goes the usual way, to be refused there. `allows(tool name, auth)`
        is the authorization guard's scope check: a call it does not allow goes the usual way
        too, for the usual 403."""
        decoder = self._decoder
        if decoder is None:
            return None
        try:
            call = decoder.decode(body)
        except msgspec.DecodeError:  # ValidationError included
            return None
        params = call.params
        tool = self._tools[type(params)]
        if tool is None:
            return None
        if routing is not None and (routing[0] != tool.header_name
                                    or routing[1] != params.meta.version):
            return None
        if allows is not None and not allows(tool.name, auth):
            return None
        core = self._core
        if core.server.tools.get(tool.name) is not tool:
            core.typed = None  # the table changed under us: build again next time
            return None
        args = params.arguments
        if args is not None:
            kwargs = _asdict(args)
        else:
            try:
                kwargs = tool.signature.bind(None)
            except Exception:
                return None  # refusals are the usual path's to word
        done = run_bound(core, call.id, tool, kwargs, None)
        if not isinstance(done, InputRequired):
            return done
        # The tool returned `InputRequired` with no context of its own: state is sealed against
        # the full envelope, so read the message the usual way for it (rare; nothing runs twice).
        from ..wire.envelope import envelope

        raw = _decode(body)["params"]
        return ask_without_context(core, call.id, tool, done, raw, envelope(raw), emit, auth, peer)


def qualifies(tool: Tool) -> bool:
    """May the typed lane run this tool? A plain `def` with no `Context`, generated arguments
    msgspec reads the same from JSON as from a decoded dict, no header bindings."""
    sig = tool.signature
    return (tool.express and sig.context_param is None and sig._struct is not None
            and sig._strict and sig._dec_hook is None and sig._extras is None
            and not tool.header_params and _read_alike(sig._struct, set()))


_SCALARS = frozenset({
    int, float, str, bool, type(None), bytes, bytearray, datetime.datetime, datetime.date,
    datetime.time, datetime.timedelta, uuid.UUID, decimal.Decimal, Any,
})
_SEQUENCES = frozenset({list, tuple, set, frozenset})


def _read_alike(tp: Any, seen: set[int]) -> bool:
    """Does `msgspec.json.decode(..., type=tp)` accept and build exactly what `msgspec.convert`
    of the decoded JSON does? They differ on non-string dict keys (JSON keys are strings: the
    decoder parses them, convert refuses) and on `Raw`; anything not known to agree counts as
    differing, which only keeps a tool on the usual path."""
    if tp in _SCALARS or tp is dict or tp is list:
        return True
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Literal:
        return True
    if origin is Union or origin is types.UnionType or origin in _SEQUENCES:
        return all(a is Ellipsis or _read_alike(a, seen) for a in args)
    if origin is dict:
        return args[0] in (str, Any) and _read_alike(args[1], seen)
    if origin is not None:
        return origin is typing.Annotated and _read_alike(args[0], seen)
    if not isinstance(tp, type):
        return False
    if issubclass(tp, enum.Enum):
        return True
    if id(tp) in seen:
        return True  # a recursive type: its fields are being looked at already
    seen.add(id(tp))
    if issubclass(tp, msgspec.Struct):
        return all(_read_alike(f.type, seen) for f in msgspec.structs.fields(tp))
    if hasattr(tp, "__dataclass_fields__") or typing.is_typeddict(tp):
        try:
            hints = typing.get_type_hints(tp)
        except Exception:  # a hint that does not resolve: not known to agree
            return False
        return all(_read_alike(h, seen) for h in hints.values())
    return False
