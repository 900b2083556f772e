"""The import rule: layers only import downwards, `TYPE_CHECKING` and function-level imports
included. wire -> kinds/state -> mrtr/auth -> server (the registry) -> core (the kernel) ->
legacy (the 2025 era) -> transport -> client/fleet -> tasks (an extension, both halves); the
public face (`rondo`, `rondo.cli`, `rondo.elicit`, ...) sits on top and may import anything.

The sanctioned climbs: `Server.asgi()` / `run_stdio()` / `run_http()` import a transport
lazily inside the method body, as shortcuts for users, and `Server.core` builds its kernel the
same way; the registry's types name `Core` for type checkers only (`TYPE_ONLY`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1].parent / "src"
RANK = {"wire": 0, "kinds": 1, "state": 1, "mrtr": 2, "auth": 2, "server": 3, "userstate": 3,
        "core": 4, "legacy": 5, "skills": 5, "events": 5, "transport": 6, "client": 7, "fleet": 7, "openapi": 7,
        "tasks": 8, "gateway": 8, "apps": 8, "cli": 9}
SHORTCUTS = {("rondo.server.server", "rondo.transport.http"),
             ("rondo.server.server", "rondo.transport.stdio"),
             # `Server.core` builds the kernel that follows it (`Server.on_change`), lazily.
             ("rondo.server.server", "rondo.core.core")}
# Names only for type checkers (under TYPE_CHECKING): what a registry API is typed with.
TYPE_ONLY = {("rondo.server.server", "rondo.core.core"),  # `Server.core -> Core`
             ("rondo.server.method", "rondo.core.core"),  # a handler is `(core, request)`
             ("rondo.server.middleware", "rondo.core.middleware")}  # it takes a `RequestView`
# Climbs known and waiting to be removed (the split of `server/` in issue 36 laid bare ten; all
# are gone). The set may only shrink: a test below holds that every entry is still a real climb.
PENDING: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else None


def imports_of(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function body) for every import in a file."""
    return [(target, line, lazy) for target, line, lazy, _ in typed_imports_of(path)]


def typed_imports_of(path: Path) -> list[tuple[str, int, bool, bool]]:
    """As `imports_of`, plus: under `if TYPE_CHECKING:`."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    found: list[tuple[str, int, bool, bool]] = []

    def visit(node: ast.AST, in_function: bool, typing: bool = False) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            typed = typing or (isinstance(child, ast.If) and isinstance(child.test, ast.Name)
                               and child.test.id == "TYPE_CHECKING")
            if isinstance(child, ast.ImportFrom):
                if child.level > len(package.split(".")):  # Python refuses it at run time
                    target = f"rondo.<beyond the top>.{child.module}"
                elif child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    target = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    target = child.module or ""
                found.append((target, child.lineno, in_function, typing))
            elif isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, in_function, typing) for alias in child.names)
            visit(child, nested, typed)

    visit(tree, False)
    return found


def climbs(root: Path = SRC / "rondo", pending: bool = False) -> list[str]:
    """Every climb; the `PENDING` ones are left out unless `pending`."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path)
        here = _layer(module)
        if here is None:
            continue
        for target, line, in_function, typing in typed_imports_of(path):
            there = _layer(target)
            if there is None or RANK[there] <= RANK[here]:
                continue
            if in_function and (module, target) in SHORTCUTS:
                continue
            if typing and (module, target) in TYPE_ONLY:
                continue
            if not pending and (module, target) in PENDING:
                continue
            bad.append(f"{module}:{line} imports {target} ({here} -> {there})")
    return bad


def test_imports_only_go_down_the_layers() -> None:
    assert climbs() == []


def test_every_pending_climb_is_still_real() -> None:
    # Struck off when fixed: an entry that no longer climbs would hide a new one later.
    real = set()
    for line in climbs(pending=True):
        where, target = line.split(" imports ")
        real.add((where.split(":")[0], target.split(" ")[0]))
    assert sorted(PENDING - real) == []


def test_the_checker_sees_type_checking_and_lazy_imports(tmp_path: Path) -> None:
    # A checker that cannot fail is no referee: plant each kind of climb and see it caught.
    pkg = tmp_path / "rondo" / "wire"
    pkg.mkdir(parents=True)
    (tmp_path / "rondo" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..server.context import Context\n"
        "def f():\n    from rondo.client import Client\n"
    )
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        found = climbs(tmp_path / "rondo")
    finally:
        SRC = saved
    assert any("rondo.server.context" in line for line in found)
    assert any("rondo.client" in line for line in found)


@pytest.mark.parametrize("layer", sorted(RANK))
def test_every_layer_exists(layer: str) -> None:
    assert (SRC / "rondo" / layer).is_dir()


def test_every_package_has_a_rank() -> None:
    # An unranked package is checked by nothing: a new one must be placed among the layers.
    packages = {p.parent.name for p in (SRC / "rondo").glob("*/__init__.py")}
    assert "wire" in packages and "apps" in packages  # the glob sees the tree
    assert sorted(packages - set(RANK)) == []


def unresolved(root: Path = SRC / "rondo") -> list[str]:
    """Imports of `rondo` modules that do not exist: after a move, a function-level relative
    import can name a module that is gone, and neither ruff nor mypy says so."""
    known = {_module_name(path) for path in root.rglob("*.py")}
    return [f"{_module_name(path)}:{line} imports {target}"
            for path in sorted(root.rglob("*.py"))
            for target, line, _ in imports_of(path)
            if target.startswith("rondo") and target not in known]


def test_every_import_of_rondo_names_a_module_that_exists() -> None:
    assert unresolved() == []


def test_the_resolver_sees_a_module_that_is_gone(tmp_path: Path) -> None:
    pkg = tmp_path / "rondo" / "legacy"
    pkg.mkdir(parents=True)
    (tmp_path / "rondo" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .middleware import run_chain\n"
                              "def g():\n    from ...mrtr.ask import book_of\n")
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        found = unresolved(tmp_path / "rondo")
    finally:
        SRC = saved
    assert found == ["rondo.legacy.a:2 imports rondo.legacy.middleware",
                     "rondo.legacy.a:4 imports rondo.<beyond the top>.mrtr.ask"]


# The one module outside `tasks/` allowed to name it: the top-level package's list of public
# subpackages (`rondo.tasks` as an attribute, for type checkers). It exports, never installs.
PUBLIC_EXPORT = ["rondo:43 imports rondo.tasks"]


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _is_tasks(target: str) -> bool:
    return target == "rondo.tasks" or target.startswith("rondo.tasks.")


def names_of_tasks(root: Path = SRC / "rondo") -> list[str]:
    """Every module outside `tasks/` (layers, CLI and public face alike) that imports the tasks
    extension (`import rondo.tasks`, `from ..tasks import x`, `from rondo import tasks`, under
    TYPE_CHECKING or in a function) or names its package in a string (`"rondo.tasks:Tasks"`,
    `import_module("rondo.tasks")`); documentation may speak of it. The default is installed
    through the `rondo.tool_options` / `rondo.client_halves` entry points (pyproject.toml)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path)
        if _is_tasks(module):
            continue
        for target, line, _, _ in typed_imports_of(path):
            if _is_tasks(target):
                found.append(f"{module}:{line} imports {target}")
        tree = ast.parse(path.read_text())
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(tree):  # `from rondo import tasks`, `from . import tasks`
            if isinstance(node, ast.ImportFrom):
                base = (".".join(package.split(".")[: len(package.split(".")) - (node.level - 1)])
                        if node.level else "")
                base = ".".join(p for p in (base, node.module or "") if p)
                found += [f"{module}:{node.lineno} imports {base}.{alias.name}" for alias in node.names
                          if _is_tasks(f"{base}.{alias.name}") and not _is_tasks(base)]
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                    and "rondo.tasks" in node.value):
                found.append(f"{module}:{node.lineno} names rondo.tasks ({node.value[:40]!r})")
    return sorted(found)


def test_no_module_outside_tasks_names_it() -> None:
    # Issue 36: tasks is installed only through the seam (entry points, `tool_options`,
    # `context_calls`, `Wrap`, the client halves); nothing outside its package names it.
    assert names_of_tasks() == PUBLIC_EXPORT


def test_the_tasks_checker_sees_every_way_of_naming_it(tmp_path: Path) -> None:
    pkg = tmp_path / "rondo" / "server"
    pkg.mkdir(parents=True)
    (tmp_path / "rondo" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (tmp_path / "rondo" / "tasks").mkdir()
    (tmp_path / "rondo" / "tasks" / "__init__.py").write_text("import rondo.server\n")
    (pkg / "a.py").write_text(
        '"""Docs may say rondo.tasks."""\n'
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from ..tasks.client import TaskHandle\n"
        "def f():\n"
        "    from rondo import tasks\n"
        "    import importlib\n"
        "    return importlib.import_module('rondo.tasks')\n"
        "DEFAULT = 'rondo.tasks:Tasks'\n"
    )
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        found = names_of_tasks(tmp_path / "rondo")
    finally:
        SRC = saved
    assert found == ["rondo.server.a:4 imports rondo.tasks.client",
                     "rondo.server.a:6 imports rondo.tasks",
                     "rondo.server.a:8 names rondo.tasks ('rondo.tasks')",
                     "rondo.server.a:9 names rondo.tasks ('rondo.tasks:Tasks')"]


# -- no module writes another's private fields ---------------------------------------------------


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return [node.target]
    return []


def _owned(tree: ast.AST) -> set[str]:
    """The attributes a module's own classes hold: their `__slots__` and `self.x` assignments."""
    owned: set[str] = set()
    for node in ast.walk(tree):
        for target in _targets(node):
            if (isinstance(target, ast.Name) and target.id == "__slots__" and isinstance(node, ast.Assign)
                    and isinstance(node.value, ast.Tuple | ast.List)):
                owned |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) \
                        and part.value.id in ("self", "cls"):
                    owned.add(part.attr)
    return owned


def _is_core(node: ast.expr) -> bool:
    """`core`, `x.core`, `x._core`: the kernel, by the names every module gives it."""
    return (isinstance(node, ast.Name) and node.id == "core") or (
        isinstance(node, ast.Attribute) and node.attr in ("core", "_core"))


def private_writes(root: Path = SRC / "rondo") -> list[str]:
    """Writes to a private field (`x._f = ...`, `x._f[k] = ...`) the module's own classes do
    not hold, and, outside `core/`, writes to the kernel's fields (`self._core.methods[k] =
    ...`, `core.express = ...`): a module changes another's state through its methods."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text())
        owned = _owned(tree)
        for node in ast.walk(tree):
            for target in _targets(node):
                for part in ast.walk(target):
                    if not isinstance(part, ast.Attribute):
                        continue
                    private = part.attr.startswith("_") and not part.attr.startswith("__")
                    kernel = _layer(module) != "core" and _is_core(part.value)
                    if (private and part.attr not in owned) or kernel:
                        found.append((module, node.lineno, f"{module}:{node.lineno} writes {ast.unparse(part)}"))
    return [line for *_, line in sorted(found)]


def test_no_module_writes_another_modules_private_fields() -> None:
    assert private_writes() == []


def test_the_write_checker_sees_pokes(tmp_path: Path) -> None:
    pkg = tmp_path / "rondo" / "server"
    pkg.mkdir(parents=True)
    (tmp_path / "rondo" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "class Server:\n"
        "    def __init__(self, core):\n"
        "        self._core = core\n"
        "        self._core.methods['x'] = 1\n"
        "        self._core.express = False\n"
        "def run(ctx):\n"
        "    ctx._sync = True\n"
        "    ctx._emit += 1\n"
    )
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        found = private_writes(tmp_path / "rondo")
    finally:
        SRC = saved
    assert found == ["rondo.server.a:4 writes self._core.methods",
                     "rondo.server.a:5 writes self._core.express",
                     "rondo.server.a:7 writes ctx._sync",
                     "rondo.server.a:8 writes ctx._emit"]


def test_the_registry_package_stays_under_3k_lines() -> None:
    # Issue 36: `server/` is the registry and the authoring surface; what only the kernel uses
    # (result shaping: core/results.py) lives in `core/`. docs/architecture.md gives the count.
    lines = sum(len(p.read_text().splitlines()) for p in (SRC / "rondo" / "server").rglob("*.py"))
    assert 2000 < lines < 3000, f"server/ is {lines} lines"
