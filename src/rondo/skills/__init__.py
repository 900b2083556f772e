"""Skills (`io.modelcontextprotocol/skills`, SEP-2640): serve a directory of skills, or skills
declared in code, as the extension defines them.

    server.extension(rondo.skills.Skills("skills/"))

See docs/skills.md.
"""

from .catalog import MAX_BYTES, MAX_FILES, Skill, SkillError, declare, digest, load_directory
from .extension import EXTENSION, Skills
from .frontmatter import FrontmatterError

__all__ = ["EXTENSION", "MAX_BYTES", "MAX_FILES", "FrontmatterError", "Skill", "SkillError",
           "Skills", "declare", "digest", "load_directory"]
