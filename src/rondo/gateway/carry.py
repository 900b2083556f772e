"""What a mount carries of its child's extensions, by the rule each extension declares on the
seam (server/extension.py):

- **merged**: an extension with `hub()`. The parent serves it through one instance with
  `join(namespace, member)` and `leave(namespace)`: its own if it has one of that name, else
  the `hub()` of the first child that brings it (installed on the parent). Each child's instance
  joins it under the child's namespace; `join` raises `ValueError` on a conflict (a name both
  serve) and changes nothing then. Skills, events, MCP Apps, per-user state, a proxy's
  tasks relay, and the proxy's wrap-only helpers (list freshness, resource watch: chained,
  `gateway/chain.py`) merge.
- **shared** (no `join`): the parent installs the child's own instance if it has none of that
  name; the same instance is fine, another instance of that name is refused (one instance
  serves a whole server, so either configuration would be dropped). Tasks, an OpenAPI
  server's schema translator.
- **not carried**: `carried = False` (the mount machinery's own wraps, made per parent).

At `unmount()` each child leaves what it joined, and an instance the mount installed is
uninstalled once no mounted child needs it (one the parent had itself stays). An extension
installed on the child after mounting is carried then; a conflict refuses that install (the
child's `server.extension(...)` raises and the child is left as it was).

Context calls (`ctx.user_state`, `ctx.start_task`) a child's extensions serve are routed: a
mounted component's handler reaches its own child's, the parent's own components the parent's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..server.server import Server

_KEY = "_rondo_gateway_carried"
Owner = Callable[[Any], "Server | None"]  # the mounted child whose component a ctx runs


class _Entry:
    __slots__ = ("instance", "own", "members", "merged", "adopted")

    def __init__(self, instance: Any, own: bool, merged: bool) -> None:
        self.instance = instance
        self.own = own  # the parent had it before any mount brought it
        self.members: dict[str, Any] = {}  # namespace -> the child's instance
        self.merged = merged
        self.adopted: Any = None  # the parent's own instance a hub took in (given back later)


def merges(extension: Any) -> bool:
    """Can it be the parent's instance that children's instances join?"""
    return all(callable(getattr(extension, hook, None)) for hook in ("join", "leave"))


def joins(extension: Any) -> bool:
    """Does a child's instance join the parent's (rather than being shared)?"""
    return callable(getattr(extension, "hub", None))


def adopts(hub: Any, extension: Any) -> bool:
    """Can `hub` (a merging instance) also serve `extension`, an instance of the same name that
    does not merge, as its own (a tasks relay hub running the server's own tasks)?"""
    take = getattr(hub, "adopts", None)
    return callable(take) and bool(take(extension))


def carried(extension: Any) -> bool:
    return getattr(extension, "carried", True) is not False


class Carrier:
    """One parent's carried extensions (kept on the parent, made at its first mount)."""

    def __init__(self, parent: Server, owner: Owner) -> None:
        self.parent = parent
        self.owner = owner
        self.entries: dict[str, _Entry] = {}
        self.routers: dict[str, Callable[..., Any]] = {}
        self.children: dict[str, Server] = {}  # namespace -> a child whose calls are routed

    @classmethod
    def of(cls, parent: Server, owner: Owner) -> Carrier:
        found: Carrier | None = parent.__dict__.get(_KEY)
        if found is None:
            found = parent.__dict__[_KEY] = cls(parent, owner)
        return found

    # -- checking, then carrying ----------------------------------------------------------------

    def check(self, child: Server, extensions: list[Any]) -> None:
        """Refuse (ValueError) before anything changes: a shared extension the parent has as
        another instance, or one the parent serves under a rule that cannot take it in."""
        for extension in extensions:
            if not carried(extension):
                continue
            name = extension.name
            have = self.parent.extensions.get(name)
            if have is None or have is extension:
                continue
            if merges(have) and (joins(extension) or adopts(have, extension)):
                continue  # `join` says whether the two fit (checked as it joins)
            if joins(extension) and not merges(have) and adopts(extension.hub(), have):
                continue  # the child's hub takes the parent's instance in (`_adopt`)
            raise ValueError(
                f"server {child.name!r} and server {self.parent.name!r} each install their own "
                f"{name!r} extension ({type(extension).__name__} and {type(have).__name__}); "
                "one instance serves every component of a server and this one does not merge, "
                "so mount would drop one's configuration: install the same instance on both, "
                "or only on the parent")

    def carry(self, namespace: str, child: Server, extension: Any) -> None:
        """Bring one child extension in (after `check`); `join` may still refuse a conflict."""
        if not carried(extension):
            return
        parent, name = self.parent, extension.name
        entry = self.entries.get(name)
        if entry is None or parent.extensions.get(name) is not entry.instance:
            have = parent.extensions.get(name)
            if have is not None:
                entry = _Entry(have, True, merges(have))
            else:
                instance = extension.hub() if joins(extension) else extension
                parent.extension(instance)
                entry = _Entry(instance, False, merges(instance))
            self.entries[name] = entry
        if not entry.merged and joins(extension) and entry.instance is not extension \
                and adopts(hub := extension.hub(), entry.instance):
            entry = self._adopt(name, entry, hub)
        if entry.merged:
            if not joins(extension) and not adopts(entry.instance, extension):
                raise ValueError(f"server {child.name!r}'s {name!r} extension "
                                 f"({type(extension).__name__}) cannot join the parent's "
                                 f"({type(entry.instance).__name__})")
            try:
                entry.instance.join(namespace, extension)
            except Exception:
                self._drop_if_unused(name, entry)
                raise
        elif entry.instance is not extension:
            raise ValueError(f"server {child.name!r} and server {parent.name!r} each install "
                             f"their own {name!r} extension; install the same instance on both")
        entry.members[namespace] = extension
        self._route(namespace, child)

    def _adopt(self, name: str, entry: _Entry, hub: Any) -> _Entry:
        """The parent's instance of `name` (its own, or one a child shared) is taken in by a
        child's `hub`, which serves it beside what joins it; the parent's own comes back when
        the hub serves it alone again (`_drop_if_unused`)."""
        parent, old = self.parent, entry.instance
        parent.remove_extension(name)
        for holder in ([""] if entry.own else []) + list(entry.members):
            hub.join(holder, old)
        parent.extension(hub)
        for call, router in self.routers.items():  # the hub's calls filed over them
            parent.context_calls[call] = router
        made = _Entry(hub, False, True)
        made.members = dict(entry.members)
        made.adopted = old if entry.own else None
        self.entries[name] = made
        return made

    def rejoin(self, namespace: str) -> None:
        """A child's catalog changed (its resources): merged extensions take it in again."""
        for entry in self.entries.values():
            member = entry.members.get(namespace)
            if entry.merged and member is not None and callable(
                    getattr(member, "carries_resource", None)):
                entry.instance.join(namespace, member)

    def release(self, namespace: str, extension: Any = None) -> None:
        """A child leaves (all of its extensions, or just `extension`, removed from it)."""
        if extension is None:
            self.children.pop(namespace, None)
        for name, entry in list(self.entries.items()):
            member = entry.members.get(namespace)
            if member is None or (extension is not None and member is not extension):
                continue
            del entry.members[namespace]
            if entry.merged:
                entry.instance.leave(namespace)
            self._drop_if_unused(name, entry)
        self._unroute()

    def _drop_if_unused(self, name: str, entry: _Entry) -> None:
        alone = getattr(entry.instance, "alone", None)
        back = alone() if entry.merged and callable(alone) else None
        if back is not None and all(m is back for m in entry.members.values()):
            # A hub left serving only the instance it adopted: that one has its place back.
            if self.parent.extensions.get(name) is entry.instance:
                self.parent.remove_extension(name)
            self.parent.extension(back)
            for call, router in self.routers.items():
                self.parent.context_calls[call] = router
            made = _Entry(back, entry.adopted is back, False)
            made.members = dict(entry.members)
            self.entries[name] = made
            entry = made
        if entry.members or entry.own:
            return
        del self.entries[name]
        if self.parent.extensions.get(name) is entry.instance:
            self.parent.remove_extension(name)

    def carries_resource(self, child: Server, uri: str) -> bool:
        """Does one of `child`'s extensions bring this resource in itself (skills, namespaced)?"""
        for extension in child.extensions.values():
            takes = getattr(extension, "carries_resource", None)
            if takes is not None and carried(extension) and takes(uri):
                return True
        return False

    # -- context calls --------------------------------------------------------------------------

    def _route(self, namespace: str, child: Server) -> None:
        self.children[namespace] = child
        for call in child.context_calls:
            if call not in self.routers:
                self.routers[call] = self._router(call)
            self.parent.context_calls[call] = self.routers[call]

    def _unroute(self) -> None:
        """A router no mounted child needs any more gives the parent's own call back."""
        wanted = {call for child in self.children.values() for call in child.context_calls}
        for call in [c for c in self.routers if c not in wanted]:
            router = self.routers.pop(call)
            if self.parent.context_calls.get(call) is router:
                own = _own_call(self.parent, call)
                if own is None:
                    del self.parent.context_calls[call]
                else:
                    self.parent.context_calls[call] = own

    def _router(self, call: str) -> Callable[..., Any]:
        parent = self.parent

        def routed(ctx: Any, *args: Any) -> Any:
            home = self.owner(ctx)
            target = home.context_calls.get(call) if home is not None else None
            if target is None:
                target = _own_call(parent, call)
            if target is None:
                raise RuntimeError(f"ctx.{call} is served by no extension of this server")
            return target(ctx, *args)

        return routed


def _own_call(parent: Server, call: str) -> Callable[..., Any] | None:
    """The parent's own extensions' context call `call` (not a mounted child's)."""
    for extension in reversed(list(parent.extensions.values())):
        calls = getattr(extension, "context_calls", None)
        found = calls().get(call) if calls is not None else None
        if found is not None:
            return found  # type: ignore[no-any-return]
    return None
