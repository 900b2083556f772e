"""The host side of the skills extension (`io.modelcontextprotocol/skills`, SEP-2640).

    skills = SkillsClient(client)
    entries = await skills.list_skills()              # the catalog: no file is read
    skill = await skills.load(entries[0])       # reads and verifies SKILL.md only
    text = (await skill.read("references/FORMS.md")).decode()   # one file, when needed

Nothing is fetched ahead of need: listing reads no file, loading reads only `SKILL.md`, and
each other file is read when asked for. Every read is checked against the entry's digest and
size, and the manifest's frontmatter against the entry's; any mismatch, or a file the entry
does not list, raises `SkillVerificationError` and the content is not returned. A digest match
proves the server (or an intermediary) is consistent, not that the skill is safe to follow.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..skills.frontmatter import FrontmatterError, parse
from .errors import ClientError, ProtocolError

if TYPE_CHECKING:
    from .session import Client

EXTENSION = "io.modelcontextprotocol/skills"
MAX_PAGES = 100


class SkillVerificationError(ClientError):
    """A skill's content does not match its entry (digest, size, frontmatter, an unlisted file)."""


def _check_entry(entry: Any) -> dict[str, Any]:
    if not isinstance(entry, Mapping):
        raise ProtocolError("a skill entry is not an object")
    uri, frontmatter, resources = entry.get("uri"), entry.get("frontmatter"), entry.get("resources")
    if not isinstance(uri, str) or not uri.endswith("/SKILL.md"):
        raise ProtocolError(f"a skill entry's uri must name its SKILL.md, got {uri!r}")
    if not isinstance(frontmatter, Mapping):
        raise ProtocolError(f"skill {uri}: frontmatter is not an object")
    if resources != "dynamic":
        if not isinstance(resources, list):
            raise ProtocolError(f"skill {uri}: resources must be a list or 'dynamic'")
        for item in resources:
            if (not isinstance(item, Mapping) or not isinstance(item.get("uri"), str)
                    or not isinstance(item.get("digest"), str)
                    or not isinstance(item.get("size"), int) or item["size"] < 0):
                raise ProtocolError(f"skill {uri}: a resources item is not {{uri, digest, size}}")
    return dict(entry)


class LoadedSkill:
    """A skill whose SKILL.md was read and verified. `manifest` is its text, `frontmatter` the
    parsed frontmatter; `read(path)` reads one more file of it, verified."""

    def __init__(self, client: Client, entry: dict[str, Any], manifest: str) -> None:
        self._client = client
        self.entry = entry
        self.uri: str = entry["uri"]
        self.base = self.uri[: -len("SKILL.md")]
        self.manifest = manifest
        self.frontmatter: dict[str, Any] = dict(entry["frontmatter"])
        self.reads: list[str] = []  # every file URI this skill has read, in order

    @property
    def files(self) -> list[str]:
        """Paths of the skill's files, as listed (empty for a `"dynamic"` skill)."""
        resources = self.entry["resources"]
        if resources == "dynamic":
            return []
        return [r["uri"][len(self.base):] for r in resources if r["uri"].startswith(self.base)]

    async def read(self, path: str) -> bytes:
        """The bytes of one file of this skill (a path inside it, or its full URI), verified."""
        uri = path if "://" in path else self.base + path
        self.reads.append(uri)
        return await _read_verified(self._client, self.entry, uri)


async def _read_bytes(client: Client, uri: str) -> bytes:
    result = await client.request("resources/read", {"uri": uri})
    contents = result.get("contents")
    if not isinstance(contents, list) or not contents or not isinstance(contents[0], Mapping):
        raise ProtocolError(f"resources/read {uri}: no contents")
    item = contents[0]
    if isinstance(item.get("text"), str):
        return str(item["text"]).encode("utf-8")
    if isinstance(item.get("blob"), str):
        try:
            return base64.b64decode(item["blob"], validate=True)
        except ValueError:
            raise ProtocolError(f"resources/read {uri}: blob is not base64") from None
    raise ProtocolError(f"resources/read {uri}: neither text nor blob")


async def _read_verified(client: Client, entry: Mapping[str, Any], uri: str) -> bytes:
    resources = entry["resources"]
    if resources == "dynamic":
        return await _read_bytes(client, uri)  # nothing was promised, nothing to check
    listed = next((r for r in resources if r["uri"] == uri), None)
    if listed is None:
        raise SkillVerificationError(f"{uri} is not listed in skill {entry['uri']}")
    data = await _read_bytes(client, uri)
    if len(data) != listed["size"]:
        raise SkillVerificationError(f"{uri}: {len(data)} bytes, the entry says {listed['size']}")
    if "sha256:" + hashlib.sha256(data).hexdigest() != listed["digest"]:
        raise SkillVerificationError(f"{uri}: content does not match the entry's digest")
    return data


class SkillsClient:
    """Skills of one connected server. Identity is (server, uri): keep one `SkillsClient` per
    server and key any cache by both."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def supported(self) -> bool:
        """True if the server declared the skills extension."""
        found = await self._client.discover()
        extensions = (getattr(found, "capabilities", None) or {}).get("extensions") or {}
        return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)

    async def list_skills(self) -> list[dict[str, Any]]:
        """Every entry of `skills/list`, following cursors (at most 100 pages). Reads no file."""
        entries: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            result = await self._client.request("skills/list", {"cursor": cursor} if cursor else {})
            page = result.get("skills")
            if not isinstance(page, list):
                raise ProtocolError("skills/list result has no skills array")
            entries.extend(_check_entry(e) for e in page)
            cursor = result.get("nextCursor")
            if not cursor:
                return entries
            if not isinstance(cursor, str) or cursor in seen:
                raise ProtocolError("skills/list repeated or sent a bad cursor")
            seen.add(cursor)
        raise ProtocolError(f"skills/list did not end within {MAX_PAGES} pages")

    async def get_skill(self, uri: str) -> dict[str, Any]:
        """One skill's entry by its SKILL.md URI (`skills/get`)."""
        result = await self._client.request("skills/get", {"uri": uri})
        return _check_entry(result.get("skill"))

    async def load(self, skill: Mapping[str, Any] | str) -> LoadedSkill:
        """Read and verify a skill's SKILL.md (an entry, or a URI: then `skills/get` first)."""
        entry = await self.get_skill(skill) if isinstance(skill, str) else _check_entry(skill)
        data = await _read_verified(self._client, entry, entry["uri"])
        try:
            text = data.decode("utf-8")
            frontmatter = parse(text)
        except (UnicodeDecodeError, FrontmatterError) as exc:
            raise SkillVerificationError(f"{entry['uri']}: unreadable frontmatter ({exc})") from None
        if frontmatter != dict(entry["frontmatter"]):
            raise SkillVerificationError(f"{entry['uri']}: frontmatter differs from the entry's")
        return LoadedSkill(self._client, entry, text)
