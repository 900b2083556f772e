# file: docs/snippets/skills_serve.py
import asyncio
import tempfile
from pathlib import Path

import rondo
from rondo.client.skills import SkillsClient, SkillVerificationError
from rondo.skills import Skills, declare

# A skills directory: each folder with a SKILL.md is a skill; its other files travel with it.
root = Path(tempfile.mkdtemp()) / "skills"
(root / "pdf-processing" / "references").mkdir(parents=True)
(root / "pdf-processing" / "SKILL.md").write_text(
    "---\nname: pdf-processing\ndescription: Extract text and fill forms in PDFs.\n---\n"
    "# PDF processing\nRead references/FORMS.md before filling a form.\n")
(root / "pdf-processing" / "references" / "FORMS.md").write_text("List the fields first.\n")

server = rondo.Server("docs-skills")
skills = server.extension(Skills(root, skills=[
    declare("release-notes", "Write release notes from merged changes.",
            "# Release notes\nGroup the changes by kind.\n",
            files={"templates/NOTES.md": "## Added\n\n## Fixed\n"}),
]))


async def main() -> None:
    async with rondo.Client(server) as client:
        host = SkillsClient(client)
        catalog = await host.list_skills()  # names and descriptions only: no file is read
        assert [e["frontmatter"]["name"] for e in catalog] == ["pdf-processing", "release-notes"]
        pdf = await host.load(catalog[0])  # reads SKILL.md, checks digest, size, frontmatter
        assert pdf.manifest.startswith("---\nname: pdf-processing")
        assert await pdf.read("references/FORMS.md") == b"List the fields first.\n"
        try:
            await pdf.read("../../etc/passwd")  # not in the skill's manifest
        except SkillVerificationError as exc:
            print("refused:", exc)

    # Change the directory, then tell the server: clients hear resources/list_changed.
    (root / "pdf-processing" / "references" / "FORMS.md").write_text("Fields, then values.\n")
    assert skills.refresh() is True
    async with rondo.Client(server) as client:
        pdf = await SkillsClient(client).load("skill://pdf-processing/SKILL.md")
        assert await pdf.read("references/FORMS.md") == b"Fields, then values.\n"


asyncio.run(main())
