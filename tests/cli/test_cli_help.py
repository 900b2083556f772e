"""`rondo --help`, `rondo --version` and what `rondo run` says when it cannot find a server (in process)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

import rondo
from rondo.cli import load_server, main


def test_help_explains_each_command_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "run" in lines and "serve" in lines["run"]
    assert "call" in lines and "client" in lines["call"]
    assert "inspect" in lines and "without starting it" in lines["inspect"]
    assert "install" in lines and "claude-desktop" in lines["install"]
    assert "--version" in out


def test_no_arguments_prints_usage_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: rondo COMMAND" in capsys.readouterr().err


def test_version_names_the_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rondo-mcp {importlib.metadata.version('rondo-mcp')}"
    assert rondo.__version__ == importlib.metadata.version("rondo-mcp")


def test_unknown_command_shows_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'serve'" in err and "usage: rondo COMMAND" in err


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_file_without_a_server_says_how_to_make_one(tmp_path: Path) -> None:
    path = _write(tmp_path, "nothing.py", "def main():\n    import rondo\n    return rondo.Server('x')\n")
    with pytest.raises(SystemExit, match="defines no rondo.Server at module level") as exc:
        load_server(path)
    message = str(exc.value)
    assert "defines no rondo.Server at module level" in message
    assert 'server = rondo.Server("my-server")' in message
    assert "FILE:NAME" not in message and f"{path}:NAME" not in message  # the old, wrong advice


def test_a_missing_name_lists_the_candidates(tmp_path: Path) -> None:
    path = _write(tmp_path, "two.py", "import rondo\nalpha = rondo.Server('a')\nbeta = rondo.Server('b')\n")
    with pytest.raises(SystemExit, match="has no rondo.Server named 'gamma'; pick one of: ") as exc:
        load_server(f"{path}:gamma")
    assert f"pick one of: {path}:alpha, {path}:beta" in str(exc.value)
    with pytest.raises(SystemExit, match="defines 2 servers; pick one of: ") as exc:
        load_server(path)
    assert "defines 2 servers" in str(exc.value) and f"{path}:alpha" in str(exc.value)
    assert load_server(f"{path}:beta").name == "b"


def test_one_server_under_two_names_is_one_server(tmp_path: Path) -> None:
    path = _write(tmp_path, "alias.py", "import rondo\nserver = rondo.Server('a')\napp = server\n")
    assert load_server(path).name == "a"
