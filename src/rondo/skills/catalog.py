"""Skills as data: one `Skill` per skill (its `skill://` path, frontmatter and files), read from
a directory or declared in code, checked against the extension's rules when made.

A skill's files are held in memory with their digests: what `skills/list` promises is exactly
what `resources/read` serves, until the catalog is reloaded.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from .frontmatter import FrontmatterError, parse, render

SCHEME = "skill://"
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
DIRECTORY = "inode/directory"
NAME = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")
_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+$")  # one path segment, URI-safe without escaping
MIME_OVERRIDES = {".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
                  ".py": "text/x-python", ".json": "application/json", ".yaml": "application/yaml",
                  ".yml": "application/yaml", ".sh": "text/x-shellscript"}


class SkillError(ValueError):
    """A skill that breaks the extension's rules (name, path, size, manifest)."""


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def mime_type(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in MIME_OVERRIDES:
        return MIME_OVERRIDES[suffix]
    guessed, _ = mimetypes.guess_type(path, strict=False)
    return guessed or "application/octet-stream"


def _check_relative(rel: str, where: str) -> str:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise SkillError(f"{where}: file path {rel!r} must be relative, without '.', '..' or '//'")
    for part in parts:
        if not _SEGMENT.match(part):
            raise SkillError(f"{where}: file path {rel!r} has a segment that is not URI-safe "
                             "(use A-Z a-z 0-9 . _ ~ -)")
    return rel


class Skill:
    """One skill: `path` is its `<skill-path>` (`pdf-processing`, or `acme/pdf-processing`),
    whose final segment equals `frontmatter["name"]`; `files` maps paths inside the skill to
    bytes and must hold `SKILL.md`."""

    __slots__ = ("path", "frontmatter", "files", "uri", "name", "digests", "total")

    def __init__(self, path: str, files: Mapping[str, bytes], *, max_files: int = MAX_FILES,
                 max_bytes: int = MAX_BYTES) -> None:
        where = f"skill {path!r}"
        segments = path.split("/")
        if not path or any(not _SEGMENT.match(s) for s in segments):
            raise SkillError(f"{where}: the skill path must be URI-safe segments joined by '/'")
        if "SKILL.md" not in files:
            raise SkillError(f"{where}: has no SKILL.md")
        if len(files) > max_files:
            raise SkillError(f"{where}: {len(files)} files, over the {max_files}-file limit")
        total = 0
        for rel, data in files.items():
            _check_relative(rel, where)
            if not isinstance(data, bytes):
                raise SkillError(f"{where}: {rel} is not bytes")
            total += len(data)
        if total > max_bytes:
            raise SkillError(f"{where}: {total} bytes, over the {max_bytes}-byte limit")
        try:
            text = files["SKILL.md"].decode("utf-8")
        except UnicodeDecodeError:
            raise SkillError(f"{where}: SKILL.md is not UTF-8") from None
        try:
            frontmatter = parse(text)
        except FrontmatterError as exc:
            raise SkillError(f"{where}: {exc}") from None
        name, description = frontmatter.get("name"), frontmatter.get("description")
        if not isinstance(name, str) or not NAME.match(name):
            raise SkillError(f"{where}: frontmatter name {name!r} must be 1-64 lowercase letters, "
                             "digits and single hyphens, not starting or ending with one")
        if segments[-1] != name:
            raise SkillError(f"{where}: the last path segment must equal the name {name!r}")
        if not isinstance(description, str) or not description:
            raise SkillError(f"{where}: frontmatter needs a non-empty description")
        metadata = frontmatter.get("metadata")
        if isinstance(metadata, dict) and any(k.startswith("io.modelcontextprotocol/") for k in metadata):
            raise SkillError(f"{where}: metadata keys under io.modelcontextprotocol/ are reserved")
        self.path = path
        self.name = name
        self.frontmatter = frontmatter
        self.files = dict(sorted(files.items()))
        self.uri = f"{SCHEME}{path}/SKILL.md"
        self.digests = {rel: digest(data) for rel, data in self.files.items()}
        self.total = total

    def file_uri(self, rel: str) -> str:
        return f"{SCHEME}{self.path}/{rel}"

    def entry(self) -> dict[str, Any]:
        """The skill's entry in `skills/list` and `skills/get`: SKILL.md first, every file once."""
        order = ["SKILL.md", *(rel for rel in self.files if rel != "SKILL.md")]
        return {
            "uri": self.uri,
            "frontmatter": self.frontmatter,
            "resources": [{"uri": self.file_uri(rel), "digest": self.digests[rel],
                           "size": len(self.files[rel])} for rel in order],
        }

    def children(self, rel_dir: str) -> list[dict[str, Any]] | None:
        """Direct children of a directory inside the skill ("" for its root), as resources;
        None if no such directory."""
        prefix = f"{rel_dir}/" if rel_dir else ""
        files: list[dict[str, Any]] = []
        dirs: dict[str, None] = {}
        for rel, data in self.files.items():
            if not rel.startswith(prefix):
                continue
            rest = rel[len(prefix):]
            if "/" in rest:
                dirs.setdefault(rest.split("/", 1)[0])
            else:
                files.append(self.file_resource(rel, data))
        if not files and not dirs and rel_dir:
            return None
        listed = [{"uri": self.file_uri(prefix + d), "name": d, "mimeType": DIRECTORY}
                  for d in sorted(dirs)]
        return listed + files

    def file_resource(self, rel: str, data: bytes | None = None) -> dict[str, Any]:
        data = self.files[rel] if data is None else data
        resource: dict[str, Any] = {"uri": self.file_uri(rel), "name": rel.rsplit("/", 1)[-1],
                                    "mimeType": mime_type(rel), "size": len(data)}
        if rel == "SKILL.md":
            resource["name"] = self.name
            resource["description"] = self.frontmatter["description"]
        return resource

    def contents(self, rel: str) -> dict[str, Any]:
        """`resources/read` contents of one file: text when it is UTF-8 text, else a base64 blob."""
        data = self.files[rel]
        item: dict[str, Any] = {"uri": self.file_uri(rel), "mimeType": mime_type(rel)}
        text = _text(data)
        if text is not None:
            item["text"] = text
        else:
            import base64

            item["blob"] = base64.b64encode(data).decode()
        return item


def _text(data: bytes) -> str | None:
    """The file as text if it is UTF-8 without NUL bytes (what a text file is), else None."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def declare(name: str, description: str, instructions: str, *,
            files: Mapping[str, str | bytes] | None = None, path: str | None = None,
            frontmatter: Mapping[str, Any] | None = None, max_files: int = MAX_FILES,
            max_bytes: int = MAX_BYTES) -> Skill:
    """A skill declared in code: its SKILL.md is written from the frontmatter and
    `instructions` (the body); `files` are the other files (text or bytes)."""
    fields: dict[str, Any] = {"name": name, "description": description, **(frontmatter or {})}
    manifest = f"---\n{render(fields)}---\n{instructions}"
    made: dict[str, bytes] = {"SKILL.md": manifest.encode()}
    for rel, data in (files or {}).items():
        if rel == "SKILL.md":
            raise SkillError(f"skill {name!r}: SKILL.md is written from the frontmatter and instructions")
        made[rel] = data.encode() if isinstance(data, str) else data
    return Skill(path or name, made, max_files=max_files, max_bytes=max_bytes)


def load_directory(root: str | os.PathLike[str], *, max_files: int = MAX_FILES,
                   max_bytes: int = MAX_BYTES) -> list[Skill]:
    """Every skill under `root`: each directory holding a SKILL.md is one, its path the
    directory's path from `root`; a skill inside a skill is its own skill, not the outer one's
    files. Symbolic links that lead outside `root`, hidden files and directories (`.git`) and
    special files are refused or skipped; any broken skill raises `SkillError`."""
    base = Path(root)
    if not base.is_dir():
        raise SkillError(f"skills directory {str(base)!r} does not exist or is not a directory")
    real_root = base.resolve()
    found: list[Skill] = []
    for skill_dir in _skill_dirs(base, real_root):
        rel_path = skill_dir.relative_to(base).as_posix()
        files = _files(skill_dir, real_root, rel_path, max_files, max_bytes)
        found.append(Skill(rel_path, files, max_files=max_files, max_bytes=max_bytes))
    return found


def _inside(path: Path, real_root: Path, where: str) -> Path:
    real = path.resolve()
    if real != real_root and real_root not in real.parents:
        raise SkillError(f"{where}: {path.name} leads outside the skills directory")
    return real


def _skill_dirs(base: Path, real_root: Path) -> Iterable[Path]:
    stack = [base]
    seen: set[Path] = set()
    while stack:
        here = stack.pop()
        real = _inside(here, real_root, "skills directory")
        if real in seen:
            continue
        seen.add(real)
        if here != base and (here / "SKILL.md").is_file():
            yield here
        for child in sorted(here.iterdir(), reverse=True):
            if not child.name.startswith(".") and child.is_dir():
                stack.append(child)


def _files(skill_dir: Path, real_root: Path, path: str, max_files: int,
           max_bytes: int) -> dict[str, bytes]:
    where = f"skill {path!r}"
    files: dict[str, bytes] = {}
    total = 0
    stack = [skill_dir]
    while stack:
        here = stack.pop()
        for child in sorted(here.iterdir()):
            if child.name.startswith("."):
                continue
            _inside(child, real_root, where)
            if child.is_dir():
                if not (child / "SKILL.md").is_file():  # a nested skill is its own
                    stack.append(child)
                continue
            if not child.is_file():
                continue  # sockets, fifos: not files of a skill
            rel = child.relative_to(skill_dir).as_posix()
            if len(files) >= max_files:
                raise SkillError(f"{where}: more than {max_files} files")
            size = child.stat().st_size
            total += size
            if total > max_bytes:
                raise SkillError(f"{where}: over {max_bytes} bytes")
            files[rel] = child.read_bytes()
    return files
