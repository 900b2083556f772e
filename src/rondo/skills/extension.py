"""`Skills`: the `io.modelcontextprotocol/skills` extension (SEP-2640) as method-table rows.

It adds `skills/list`, `skills/get` and (with `directory_read=True`) `resources/directory/read`,
wraps `resources/read` so `skill://` URIs are served from the catalog (anything else goes to the
server's own resources), and registers each skill's `SKILL.md` as a resource, so it is listed by
`resources/list` with the skill's name and description and the server declares `resources`.
"""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..server.method import Handler, Method, Wrap
from ..wire.era import MODERN
from ..wire.errors import invalid_params, resource_not_found
from .catalog import MAX_BYTES, MAX_FILES, SCHEME, Skill, SkillError, load_directory

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from ..server.server import Server

log = logging.getLogger("rondo.skills")

EXTENSION = "io.modelcontextprotocol/skills"


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"s{offset}".encode()).decode().rstrip("=")


def _offset(cursor: Any, total: int) -> int:
    if cursor is None:
        return 0
    if not isinstance(cursor, str) or len(cursor) > 64:
        raise invalid_params("Invalid cursor")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if not raw.startswith("s"):
            raise ValueError
        offset = int(raw[1:])
    except (ValueError, UnicodeDecodeError):
        raise invalid_params("Invalid cursor") from None
    if not 0 <= offset <= total:
        raise invalid_params("Invalid cursor")
    return offset


class Skills:
    """Serve skills: `server.extension(Skills("skills/"))`, or skills declared in code with
    `Skills(skills=[rondo.skills.declare(...)])` (both may be given).

    - `directory`: each directory under it holding a `SKILL.md` is a skill, its path from the
      directory its `skill://` path; read once at construction, again on `refresh()`.
    - `directory_read`: answer `resources/directory/read` (advertised as `directoryRead`).
    - `ttl_ms`, `cache_scope`: the cache attributes of `skills/list` and `skills/get`
      (2026-07-28); `page_size`: entries per `skills/list` page.
    - `max_files`, `max_bytes`: per skill, at most the extension's 512 files and 16 MiB.
    """

    name = EXTENSION

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        skills: Iterable[Skill] = (),
        directory_read: bool = True,
        ttl_ms: int = 300_000,
        cache_scope: str = "public",
        page_size: int = 50,
        max_files: int = MAX_FILES,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        if not isinstance(ttl_ms, int) or isinstance(ttl_ms, bool) or ttl_ms < 0:
            raise ValueError("ttl_ms must be a non-negative integer")
        if cache_scope not in ("public", "private"):
            raise ValueError("cache_scope must be 'public' or 'private'")
        if not isinstance(page_size, int) or page_size < 1:
            raise ValueError("page_size must be a positive integer")
        if not 1 <= max_files <= MAX_FILES or not 1 <= max_bytes <= MAX_BYTES:
            raise ValueError(f"max_files and max_bytes are at most {MAX_FILES} and {MAX_BYTES}")
        self.directory = directory
        self.declared = list(skills)
        self.directory_read = bool(directory_read)
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope
        self.page_size = page_size
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.server: Server | None = None
        self.skills: dict[str, Skill] = {}  # by path
        # Mounted children's skills, under `<namespace>/<path>` (`join`), and the whole catalog
        # served (own and joined), made again when either changes.
        self.joined: dict[str, dict[str, Skill]] = {}
        self._every: dict[str, Skill] | None = None
        self._install(self._load())

    # -- the catalog ---------------------------------------------------------------------------

    def _load(self) -> dict[str, Skill]:
        found = list(self.declared)
        if self.directory is not None:
            found += load_directory(self.directory, max_files=self.max_files,
                                    max_bytes=self.max_bytes)
        catalog: dict[str, Skill] = {}
        for skill in found:
            if skill.path in catalog:
                raise SkillError(f"skill path {skill.path!r} is served twice")
            catalog[skill.path] = skill
        return dict(sorted(catalog.items()))

    def _install(self, catalog: dict[str, Skill]) -> None:
        old = self.skills
        self.skills = catalog
        self._every = None
        server = self.server
        if server is None:
            return
        for skill in old.values():
            if skill.uri in server.resources and skill.path not in catalog:
                server.remove_resource(skill.uri)
        for skill in catalog.values():
            previous = old.get(skill.path)
            if previous is not None and skill.uri in server.resources:
                if previous.digests == skill.digests:
                    continue
                server.remove_resource(skill.uri)
            self._register(server, skill)

    def _register(self, server: Server, skill: Skill) -> None:
        manifest = skill.files["SKILL.md"]

        def read_manifest() -> str:
            return manifest.decode("utf-8")

        server.resource(skill.uri, name=skill.name, description=skill.frontmatter["description"],
                        mime_type="text/markdown", size=len(manifest))(read_manifest)

    def refresh(self) -> bool:
        """Read the directory again; if any skill changed, serve the new catalog and tell
        clients (`notifications/resources/list_changed`). True if something changed. A broken
        skill raises `SkillError` and the previous catalog stays served."""
        catalog = self._load()
        before = {p: s.digests for p, s in self.skills.items()}
        after = {p: s.digests for p, s in catalog.items()}
        if before == after:
            return False
        self._install(catalog)
        if self.server is not None:
            self.server.notify_resources_changed()
        return True

    def catalog(self) -> dict[str, Skill]:
        """Every skill served, by path: this server's own and its mounted children's."""
        every = self._every
        if every is None:
            every = {}
            for skills in self.joined.values():
                every.update(skills)
            every.update(self.skills)  # a clash `join` could not see (added later): ours wins
            every = self._every = dict(sorted(every.items()))
        return every

    def find(self, uri: str) -> tuple[Skill, str] | None:
        """The skill serving `uri` and the file's path inside it (None if none does)."""
        if not uri.startswith(SCHEME):
            return None
        rest = uri[len(SCHEME):]
        parts = rest.split("/")
        every = self.catalog()
        for cut in range(len(parts) - 1, 0, -1):  # the longest skill path wins (nested skills)
            skill = every.get("/".join(parts[:cut]))
            if skill is not None:
                return skill, "/".join(parts[cut:])
        return None

    # -- mounted (rondo.gateway.mount): a child's skills under its namespace ---------------------

    def hub(self) -> Skills:
        """The instance a parent without skills serves its mounted children's with: none of its
        own, this one's list and cache settings."""
        return Skills(directory_read=self.directory_read, ttl_ms=self.ttl_ms,
                      cache_scope=self.cache_scope, page_size=self.page_size,
                      max_files=self.max_files, max_bytes=self.max_bytes)

    def carries_resource(self, uri: str) -> bool:
        """A child's `skill://` resource is the skills extension's to bring in (namespaced)."""
        return self.find(uri) is not None

    def join(self, namespace: str, member: Any) -> None:
        """Serve `member`'s skills (a mounted child's) as `skill://<namespace>/<path>/...`, as
        a mount prefixes tool names: two children's same-named skills do not collide. Again for
        the same namespace: its catalog is taken in anew (the child refreshed). A path this
        server already serves, or a URI it already has, is refused (SkillError) and nothing
        changes."""
        if not isinstance(member, Skills):
            raise SkillError(f"a mounted server's {EXTENSION!r} extension is not Skills")
        others = {path for ns, skills in self.joined.items() if ns != namespace
                  for path in skills} | set(self.skills)
        server = self.server
        before = self.joined.get(namespace, {})
        fresh: dict[str, Skill] = {}
        for path, skill in member.catalog().items():
            full = f"{namespace}/{path}"
            if full in others:
                raise SkillError(f"skill path {full!r} (skill {path!r} of the server mounted as "
                                 f"{namespace!r}) is already served by this server")
            same = before.get(full)
            if same is not None and same.digests == skill.digests:
                fresh[full] = same
                continue
            made = Skill(full, skill.files, max_files=len(skill.files), max_bytes=skill.total)
            if server is not None and made.uri in server.resources and same is None:
                raise SkillError(f"skill {made.uri!r} of the server mounted as {namespace!r}: "
                                 "this server already serves that URI")
            fresh[full] = made
        self.joined[namespace] = fresh
        self._every = None
        if server is None:
            return
        for full, skill in before.items():
            if fresh.get(full) is not skill and skill.uri in server.resources:
                server.remove_resource(skill.uri)
        for full, skill in fresh.items():
            if before.get(full) is not skill:
                self._register(server, skill)

    def leave(self, namespace: str) -> None:
        gone = self.joined.pop(namespace, {})
        self._every = None
        server = self.server
        for skill in gone.values():
            if server is not None and skill.uri in server.resources:
                server.remove_resource(skill.uri)

    # -- the Extension protocol ----------------------------------------------------------------

    def capability(self, server: Server) -> Mapping[str, Any] | None:
        if self.server is None:
            self.server = server
        return {"directoryRead": True} if self.directory_read else {}

    def methods(self) -> Iterable[Method]:
        rows = [
            Method("skills/list", self._list),
            Method("skills/get", self._get),
        ]
        if self.directory_read:
            rows.append(Method("resources/directory/read", self._directory, gate="resources"))
        return rows

    def wraps(self) -> Iterable[Wrap]:
        # skill:// reads are the catalog's; every other read goes on to the built-in row, which
        # keeps its name field, `may_ask` and `suspends` (a skill read never waits: the file's
        # bytes are in memory, and the SKILL.md resource it registers is a plain `def`).
        return [Wrap("resources/read", self._read)]

    def attach(self, server: Server) -> None:
        """Called by `server.extension(...)`: register the SKILL.md resources on `server`."""
        self.server = server
        self._install(self.skills)

    # -- methods -------------------------------------------------------------------------------

    def _cache(self, req: Request, result: dict[str, Any]) -> dict[str, Any]:
        # skills/list, skills/get and resources/directory/read are cacheable results on 2026-07-28.
        if req.dialect.era == MODERN:
            result["ttlMs"] = self.ttl_ms
            result["cacheScope"] = self.cache_scope
        return result

    async def _list(self, core: Core, req: Request) -> dict[str, Any]:
        skills = list(self.catalog().values())
        start = _offset(req.params.get("cursor"), len(skills))
        end = start + self.page_size
        result: dict[str, Any] = {"skills": [s.entry() for s in skills[start:end]]}
        if end < len(skills):
            result["nextCursor"] = _cursor(end)
        return self._cache(req, result)

    async def _get(self, core: Core, req: Request) -> dict[str, Any]:
        uri = req.params.get("uri")
        if not isinstance(uri, str) or not uri:
            raise invalid_params("skills/get needs a uri")
        found = self.find(uri)
        if found is None or found[1] != "SKILL.md":
            raise invalid_params(f"Unknown skill: {uri[:200]}")
        return self._cache(req, {"skill": found[0].entry()})

    async def _read(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        uri = req.params.get("uri")
        if not isinstance(uri, str) or not uri.startswith(SCHEME):
            return await call_next(core, req)
        found = self.find(uri)
        if found is None or found[1] not in found[0].files:
            raise resource_not_found(uri[:200])
        skill, rel = found
        result: dict[str, Any] = {"contents": [skill.contents(rel)]}
        if req.dialect.era == MODERN:
            server = core.server
            result.update(ttlMs=server.read_ttl_ms, cacheScope=server.read_cache_scope)
        return result

    async def _directory(self, core: Core, req: Request) -> dict[str, Any]:
        uri = req.params.get("uri")
        if not isinstance(uri, str) or not uri.startswith(SCHEME):
            raise invalid_params("resources/directory/read needs a skill:// directory uri")
        trimmed = uri.rstrip("/")
        skill = self.catalog().get(trimmed[len(SCHEME):])
        rel_dir = ""
        if skill is None:
            found = self.find(trimmed)
            if found is None:
                raise invalid_params(f"Not a directory: {uri[:200]}")
            skill, rel_dir = found
        children = skill.children(rel_dir)
        if children is None or rel_dir in skill.files:
            raise invalid_params(f"Not a directory: {uri[:200]}")
        start = _offset(req.params.get("cursor"), len(children))
        end = start + core.server.page_size
        result: dict[str, Any] = {"resources": children[start:end]}
        if end < len(children):
            result["nextCursor"] = _cursor(end)
        return self._cache(req, result)

