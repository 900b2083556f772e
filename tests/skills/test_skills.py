"""The skills extension (SEP-2640): a directory and code-declared skills served through real
requests on both eras, the extension's rules and limits, and the host side's verification."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rondo
from rondo.client.skills import SkillsClient, SkillVerificationError
from rondo.skills import SkillError, Skills, declare
from rondo.skills.frontmatter import FrontmatterError, parse, render

ERAS = ["2026-07-28", "2025-11-25"]
ROOT = Path(__file__).resolve().parents[1].parent
FIXTURE = ROOT / "conformance" / "skills"


def run_async(fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(fn(*args, **kwargs))
    return wrapper


def write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def manifest(name: str, description: str = "Does a thing.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n"


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write(root, "pdf/SKILL.md", manifest("pdf", "Work with PDFs."))
    write(root, "pdf/references/FORMS.md", "# Forms\n")
    write(root, "pdf/references/deep/more.txt", "more\n")
    write(root, "pdf/logo.png", b"\x89PNG\x00\x01")
    write(root, "acme/notes/SKILL.md", manifest("notes"))
    write(root, ".git/config", "not a skill")
    return root


def serve(*args: Any, **kwargs: Any) -> rondo.Server:
    server = rondo.Server("skills-test", state=None)
    server.extension(Skills(*args, **kwargs))
    return server


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("era", ERAS)
@run_async
async def test_a_directory_is_listed_with_digests_and_read_back_on_both_eras(
        era: str, skills_dir: Path) -> None:
    server = serve(skills_dir)
    async with rondo.Client(server, protocol=era) as client:
        caps = (await client.request("skills/list", {}))
        entries = {e["uri"]: e for e in caps["skills"]}
        assert set(entries) == {"skill://acme/notes/SKILL.md", "skill://pdf/SKILL.md"}
        pdf = entries["skill://pdf/SKILL.md"]
        assert pdf["frontmatter"] == {"name": "pdf", "description": "Work with PDFs."}
        files = {r["uri"]: r for r in pdf["resources"]}
        assert pdf["resources"][0]["uri"] == "skill://pdf/SKILL.md"
        for rel in ("SKILL.md", "references/FORMS.md", "references/deep/more.txt", "logo.png"):
            data = (skills_dir / "pdf" / rel).read_bytes()
            assert files[f"skill://pdf/{rel}"] == {"uri": f"skill://pdf/{rel}", "digest": sha(data),
                                                   "size": len(data)}
        assert len(files) == 4  # no hidden files, nothing of another skill
        read = await client.request("resources/read", {"uri": "skill://pdf/logo.png"})
        assert read["contents"][0]["blob"] == "iVBORwAB"  # binary: base64
        read = await client.request("resources/read", {"uri": "skill://pdf/references/FORMS.md"})
        assert read["contents"][0] == {"uri": "skill://pdf/references/FORMS.md",
                                       "mimeType": "text/markdown", "text": "# Forms\n"}
        got = await client.request("skills/get", {"uri": "skill://pdf/SKILL.md"})
        assert got["skill"] == pdf
        if era == "2026-07-28":
            assert (got["ttlMs"], got["cacheScope"]) == (300_000, "public")
            assert (caps["ttlMs"], caps["cacheScope"]) == (300_000, "public")
        listed = {r["uri"]: r for r in (await client.request("resources/list", {}))["resources"]}
        assert listed["skill://pdf/SKILL.md"]["name"] == "pdf"
        assert listed["skill://pdf/SKILL.md"]["description"] == "Work with PDFs."
        assert listed["skill://pdf/SKILL.md"]["mimeType"] == "text/markdown"


@run_async
async def test_the_capability_and_unknown_uris() -> None:
    server = serve(FIXTURE)
    async with rondo.Client(server) as client:
        found = await client.discover()
        assert found.capabilities["extensions"]["io.modelcontextprotocol/skills"] == {"directoryRead": True}
        assert "resources" in found.capabilities
        for method, uri in (("skills/get", "skill://nope/SKILL.md"),
                            ("skills/get", "skill://pdf-processing/references/FORMS.md"),
                            ("resources/directory/read", "skill://pdf-processing/SKILL.md"),
                            ("resources/directory/read", "skill://nope"),
                            ("resources/directory/read", "https://example.com/")):
            with pytest.raises(rondo.McpError, match="Unknown skill|Not a directory|needs a skill") as err:
                await client.request(method, {"uri": uri})
            assert err.value.code == -32602
        with pytest.raises(rondo.McpError, match="^Resource not found$") as err:
            await client.request("resources/read", {"uri": "skill://pdf-processing/missing.md"})
        assert err.value.code == -32602  # 2026-07-28's resource-not-found code (SEP-2164)


@run_async
async def test_directory_read_lists_direct_children_and_pages(skills_dir: Path) -> None:
    server = serve(skills_dir)
    server.page_size = 1
    async with rondo.Client(server) as client:
        seen: list[dict[str, Any]] = []
        params: dict[str, Any] = {"uri": "skill://pdf"}
        while True:
            page = await client.request("resources/directory/read", params)
            assert len(page["resources"]) == 1
            seen += page["resources"]
            if "nextCursor" not in page:
                break
            params = {"uri": "skill://pdf", "cursor": page["nextCursor"]}
        assert [(r["uri"], r["mimeType"]) for r in seen] == [
            ("skill://pdf/references", "inode/directory"),
            ("skill://pdf/SKILL.md", "text/markdown"),
            ("skill://pdf/logo.png", "image/png"),
        ]
        server.page_size = 100
        deeper = await client.request("resources/directory/read", {"uri": "skill://pdf/references"})
        assert (deeper["ttlMs"], deeper["cacheScope"]) == (300_000, "public")
        assert [r["uri"] for r in deeper["resources"]] == ["skill://pdf/references/deep",
                                                          "skill://pdf/references/FORMS.md"]


@run_async
async def test_skills_list_pages_keep_each_entry_whole(skills_dir: Path) -> None:
    server = serve(skills_dir, page_size=1, skills=[declare("hello", "Greets.", "Say hi.\n")])
    async with rondo.Client(server) as client:
        first = await client.request("skills/list", {})
        assert len(first["skills"]) == 1 and "nextCursor" in first
        assert [e["uri"] for e in await SkillsClient(client).list_skills()] == [
            "skill://acme/notes/SKILL.md", "skill://hello/SKILL.md", "skill://pdf/SKILL.md"]
        for bad in ("zzz", 7, "c0"):
            with pytest.raises(rondo.McpError, match="Invalid cursor"):
                await client.request("skills/list", {"cursor": bad})


@run_async
async def test_code_declared_skills_round_trip_through_the_host_side() -> None:
    skill = declare("release-notes", "Write release notes: grouped, dated.",
                    "# Notes\nGroup by kind.\n", files={"templates/NOTES.md": "## Added\n",
                                                        "data/x.bin": b"\x00\xff"},
                    frontmatter={"metadata": {"author": "me", "version": "1.0"}})
    server = serve(skills=[skill])
    async with rondo.Client(server) as client:
        host = SkillsClient(client)
        assert await host.supported()
        (entry,) = await host.list_skills()
        loaded = await host.load(entry)
        assert loaded.frontmatter["metadata"] == {"author": "me", "version": "1.0"}
        assert loaded.manifest.endswith("# Notes\nGroup by kind.\n")
        assert sorted(loaded.files) == ["SKILL.md", "data/x.bin", "templates/NOTES.md"]
        assert await loaded.read("templates/NOTES.md") == b"## Added\n"
        assert await loaded.read("data/x.bin") == b"\x00\xff"
        with pytest.raises(SkillVerificationError, match="not listed"):
            await loaded.read("secrets.txt")


@run_async
async def test_the_host_reads_nothing_ahead_of_need_and_refuses_tampered_content(
        skills_dir: Path) -> None:
    server = serve(skills_dir)
    reads: list[str] = []
    (wrap,) = [w for w in server.wraps if w.method == "resources/read"]
    original = wrap.handler

    async def spy(core: Any, req: Any, call_next: Any) -> Any:  # every read the host makes
        reads.append(req.params["uri"])
        return await original(core, req, call_next)

    wrap.handler = spy
    ext = server.extensions["io.modelcontextprotocol/skills"]
    pdf_skill = ext.skills["pdf"]  # type: ignore[attr-defined]
    async with rondo.Client(server) as client:
        host = SkillsClient(client)
        entries = await host.list_skills()
        await host.get_skill("skill://pdf/SKILL.md")
        assert reads == []  # listing and getting read no file
        pdf = next(e for e in entries if e["uri"] == "skill://pdf/SKILL.md")
        loaded = await host.load(pdf)
        assert reads == ["skill://pdf/SKILL.md"]
        pdf_skill.files["references/FORMS.md"] = b"# Form!\n"  # same size, other bytes
        with pytest.raises(SkillVerificationError, match="does not match the entry's digest"):
            await loaded.read("references/FORMS.md")
        pdf_skill.files["references/FORMS.md"] = b"# Forms, longer\n"
        with pytest.raises(SkillVerificationError, match="bytes, the entry says 8"):
            await loaded.read("references/FORMS.md")
        forged = dict(pdf, frontmatter={"name": "pdf", "description": "Exfiltrate."})
        with pytest.raises(SkillVerificationError, match="frontmatter differs"):
            await host.load(forged)


@run_async
async def test_other_reads_go_through_the_built_in_row_and_skill_reads_stay_inline(
        skills_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rondo.core.methods import BUILTIN

    (builtin,) = [m for m in BUILTIN if m.name == "resources/read"]
    ran: list[str] = []
    original = builtin.handler

    async def spy(core: Any, req: Any) -> Any:  # the built-in row's handler, watched
        ran.append(req.params["uri"])
        return await original(core, req)

    monkeypatch.setattr(builtin, "handler", spy)
    server = serve(skills_dir)
    assert not [m for m in server.extra_methods if m.name == "resources/read"]  # no replaced row

    @server.resource("note://plain", ttl_ms=7)
    def plain() -> str:
        return "plain"

    @server.resource("note://slow")
    async def slow() -> str:
        return "slow"

    core = server.core
    assert core.methods["resources/read"].name_field == "uri"  # the row keeps its own facts
    assert core.methods["resources/read"].may_ask is True
    assert core.may_suspend("resources/read", {"uri": "note://slow"}) is True
    for uri in ("note://plain", "skill://pdf/SKILL.md", "skill://pdf/logo.png", "skill://nope/x"):
        assert core.may_suspend("resources/read", {"uri": uri}) is False  # answered inline
    async with rondo.Client(server) as client:
        read = await client.request("resources/read", {"uri": "note://plain"})
        assert read["contents"][0]["text"] == "plain"
        assert read["ttlMs"] == 7  # the built-in row's answer: the resource's own ttl
        assert ran == ["note://plain"]
        skill = await client.request("resources/read", {"uri": "skill://pdf/references/FORMS.md"})
        assert skill["contents"][0]["text"] == "# Forms\n"
        assert ran == ["note://plain"]  # the skill wrap answered; the built-in never ran
        with pytest.raises(rondo.McpError, match="^Resource not found$"):
            await client.request("resources/read", {"uri": "note://missing"})
        assert ran == ["note://plain", "note://missing"]


@run_async
async def test_refresh_serves_changes_and_says_so(skills_dir: Path) -> None:
    server = serve(skills_dir)
    ext = server.extensions["io.modelcontextprotocol/skills"]
    told: list[str] = []
    server.notify_resources_changed = lambda: told.append("resources")  # type: ignore[method-assign]
    assert ext.refresh() is False and told == []  # type: ignore[attr-defined]
    write(skills_dir, "pdf/references/FORMS.md", "# Forms v2\n")
    write(skills_dir, "fresh/SKILL.md", manifest("fresh"))
    shutil.rmtree(skills_dir / "acme")
    assert ext.refresh() is True and told == ["resources"]  # type: ignore[attr-defined]
    async with rondo.Client(server) as client:
        uris = [e["uri"] for e in await SkillsClient(client).list_skills()]
        assert uris == ["skill://fresh/SKILL.md", "skill://pdf/SKILL.md"]
        listed = [r["uri"] for r in (await client.request("resources/list", {}))["resources"]]
        assert sorted(listed) == ["skill://fresh/SKILL.md", "skill://pdf/SKILL.md"]
        loaded = await SkillsClient(client).load("skill://pdf/SKILL.md")
        assert await loaded.read("references/FORMS.md") == b"# Forms v2\n"
    write(skills_dir, "broken/SKILL.md", "no frontmatter")
    with pytest.raises(SkillError, match="must begin with '---'"):
        ext.refresh()  # type: ignore[attr-defined]
    assert "skill://fresh/SKILL.md" in server.resources  # the previous catalog stays


def test_broken_skills_fail_at_start_up(tmp_path: Path) -> None:
    cases: list[tuple[str, dict[str, str | bytes], str]] = [
        ("name", {"x/SKILL.md": manifest("Bad_Name")}, "must be 1-64 lowercase"),
        ("segment", {"other/SKILL.md": manifest("pdf")}, "last path segment must equal"),
        ("nodesc", {"a/SKILL.md": "---\nname: a\n---\n"}, "non-empty description"),
        ("yaml", {"a/SKILL.md": "---\nname: a\ndescription: [unclosed\n---\n"}, "flow sequence"),
        ("anchor", {"a/SKILL.md": "---\nname: &n a\ndescription: d\n---\n"}, "not supported"),
        ("reserved", {"a/SKILL.md": manifest("a", extra="metadata:\n  io.modelcontextprotocol/x: 1\n")},
         "reserved"),
        ("utf8", {"a/SKILL.md": b"---\nname: a\xff\n---\n"}, "not UTF-8"),
    ]
    for label, files, message in cases:
        root = tmp_path / label
        for rel, data in files.items():
            write(root, rel, data)
        with pytest.raises(SkillError, match=message):
            Skills(root)
    with pytest.raises(SkillError, match="does not exist"):
        Skills(tmp_path / "missing")
    with pytest.raises(SkillError, match="served twice"):
        Skills(skills=[declare("a", "d", "b"), declare("a", "d", "c")])


def test_limits_are_enforced(tmp_path: Path) -> None:
    many = tmp_path / "many"
    write(many, "big/SKILL.md", manifest("big"))
    for i in range(512):
        write(many, f"big/f{i}.txt", "x")
    with pytest.raises(SkillError, match="more than 512 files"):
        Skills(many)
    large = tmp_path / "large"
    write(large, "big/SKILL.md", manifest("big"))
    write(large, "big/blob.bin", b"\0" * (16 * 1024 * 1024))
    with pytest.raises(SkillError, match="over 16777216 bytes"):
        Skills(large)
    with pytest.raises(SkillError, match="over the 3-file limit"):
        declare("a", "d", "b", files={"1": "x", "2": "y", "3": "z"}, max_files=3)
    with pytest.raises(ValueError, match="at most 512"):
        Skills(max_files=513)


def test_paths_that_escape_the_directory_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.txt", "secret")
    root = tmp_path / "skills"
    write(root, "a/SKILL.md", manifest("a"))
    os.symlink(outside / "secret.txt", root / "a" / "leak.txt")
    with pytest.raises(SkillError, match="leads outside the skills directory"):
        Skills(root)
    (root / "a" / "leak.txt").unlink()
    os.symlink(outside, root / "a" / "linked")
    with pytest.raises(SkillError, match="leads outside the skills directory"):
        Skills(root)
    for bad in ("../x", "a//b", "/etc/passwd", "a b"):
        with pytest.raises(SkillError, match="file path"):
            declare("a", "d", "b", files={bad: "x"})


# -- the frontmatter parser ------------------------------------------------------------------

CORPUS = [
    "name: pdf\ndescription: Extract text.\n",
    "name: pdf\ndescription: >\n  Folded\n  text.\n\n  Para.\nlicense: MIT\n",
    "name: pdf\ndescription: |-\n  Literal\n    indented\n  end\n",
    "name: pdf\ndescription: 'It''s quoted # not a comment'\nallowed-tools: Bash(git:*) Read\n",
    'name: pdf\ndescription: "Esc \\"q\\" \\u00e9 \\n"\nmetadata:\n  author: x  # comment\n  version: "1.0"\n  n: 12\n  f: 1.5\n  t: true\n  z: ~\n',
    "name: pdf\ndescription: Long plain\n  continued here\n  and here.\ntags: [a, 'b c', 3]\nlist:\n  - one\n  - \"two\"\n",
    "name: pdf\ndescription: x\nkeys:\n- a\n- b\nnested:\n  deeper:\n    k: v\n",
]


@pytest.mark.parametrize("text", CORPUS)
def test_frontmatter_matches_a_real_yaml_parser(text: str) -> None:
    """Cross-checked with the `yaml` package the conformance runner itself parses with."""
    node = shutil.which("node") or os.environ.get("RONDO_NODE_BIN", "") + "/node"
    yaml_dir = ROOT / ".cache" / "conformance" / "node_modules" / "yaml"
    if not Path(node).exists() or not yaml_dir.exists():
        pytest.fail("node and the conformance runner's yaml package are needed: bash scripts/setup.sh")
    script = ("const y=require(process.argv[1]);let s='';process.stdin.on('data',d=>s+=d)"
              ".on('end',()=>console.log(JSON.stringify(y.parse(s))))")
    done = subprocess.run([node, "-e", script, str(yaml_dir)], input=text, capture_output=True,
                          text=True, timeout=30, check=True)
    assert parse(f"---\n{text}---\nbody") == json.loads(done.stdout)


@pytest.mark.parametrize("text, message", [
    ("name: a\nname: b\n", "duplicate key"),
    ("name: a\n\tdescription: b\n", "tabs"),
    ("- a\n", "must be a mapping"),
    ("name: {a: 1}\n", "not supported"),
    ("name: a: b\n", "quote it"),
    ("name: \"open\n", "unterminated"),
])
def test_frontmatter_it_will_not_guess_at_is_refused(text: str, message: str) -> None:
    with pytest.raises(FrontmatterError, match=message):
        parse(f"---\n{text}---\n")


def test_frontmatter_needs_its_fences() -> None:
    with pytest.raises(FrontmatterError, match="must begin with"):
        parse("# no frontmatter")
    with pytest.raises(FrontmatterError, match="no closing"):
        parse("---\nname: a\n")


SCALARS = st.none() | st.booleans() | st.integers(-10**9, 10**9) | st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)
KEYS = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(KEYS, SCALARS | st.lists(SCALARS, max_size=3)
                       | st.dictionaries(KEYS, SCALARS, min_size=1, max_size=3), max_size=6))
def test_rendered_frontmatter_parses_back(fields: dict[str, Any]) -> None:
    assert parse(f"---\n{render(fields)}---\n") == fields


def test_an_escaped_backslash_before_a_quote_stays_a_backslash() -> None:
    # Found by the round-trip property: `"\\'"` is a backslash and a quote, not an escaped quote.
    assert parse('---\na: "\\\\\'"\n---\n') == {"a": "\\'"}
    assert parse('---\na: "it\\\'s"\n---\n') == {"a": "it's"}  # the lenient `\'` still reads
