"""Load a script that lives outside the `tests` package (benchmarks/, examples/) as a module,
by its file, without putting its folder on `sys.path` for the whole test session."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def load(relative: str) -> ModuleType:
    """The module at REPO/relative (e.g. "benchmarks/run.py"), imported once under its stem."""
    path = REPO / relative
    name = path.stem
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(path):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def child_env(*folders: str) -> dict[str, str]:
    """os.environ with REPO/folder for each folder put first on PYTHONPATH, for a child process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(str(REPO / f) for f in folders),
                                         *filter(None, [env.get("PYTHONPATH")])])
    return env
