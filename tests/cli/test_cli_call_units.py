"""`rondo call`'s small parts, in process: server files as targets, NAME=VALUE arguments read
by the tool's schema, and errors said in the command's own words."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rondo.cli.call import cli_message, command_of, parse_arguments, typed_arguments
from rondo.client.auth import RegistrationError


def test_a_server_file_runs_with_rondo_run_and_a_command_line_is_split(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text("import rondo\nserver = rondo.Server('x')\n")
    assert command_of(str(app)) == [sys.executable, "-m", "rondo", "run", str(app)]
    assert command_of(f"{app}:server") == [sys.executable, "-m", "rondo", "run", f"{app}:server"]
    assert command_of(f"python {app} --stdio") == ["python", str(app), "--stdio"]
    assert command_of(str(tmp_path / "missing.py")) == [str(tmp_path / "missing.py")]


def test_arguments_are_one_json_object_or_name_value_pairs() -> None:
    assert parse_arguments([]) == ({}, {})
    assert parse_arguments(['{"a": 1}']) == ({"a": 1}, {})
    assert parse_arguments(["a=1", "b=x=y", "c="]) == ({}, {"a": "1", "b": "x=y", "c": ""})
    with pytest.raises(ValueError, match="one JSON object or NAME=VALUE pairs; got 'oops'"):
        parse_arguments(["a=1", "oops"])
    with pytest.raises(ValueError, match="arguments are not JSON"):
        parse_arguments(["{nope"])
    with pytest.raises(ValueError, match="NAME=VALUE pairs; got '\\{\"a\": 1\\}'"):
        parse_arguments(['{"a": 1}', "x=1"])  # a JSON object comes alone


def test_values_are_read_as_the_schema_says() -> None:
    schema = {"type": "object", "properties": {
        "name": {"type": "string"}, "n": {"type": "integer"}, "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}}, "code": {"type": ["string", "null"]},
        "mode": {"enum": ["1", "2"]}}}
    got = typed_arguments({"name": "007", "n": "7", "ok": "true", "tags": '["a"]', "code": "12",
                           "mode": "1", "extra": "3", "free": "text"}, schema)
    assert got == {"name": "007", "n": 7, "ok": True, "tags": ["a"], "code": "12", "mode": "1",
                   "extra": 3, "free": "text"}
    with pytest.raises(ValueError, match="n='seven': the tool wants integer"):
        typed_arguments({"n": "seven"}, schema)
    assert typed_arguments({"x": "1"}, None) == {"x": 1}


def test_the_sign_in_error_names_the_flag_not_the_keyword() -> None:
    error = RegistrationError("https://as.example offers neither dynamic registration nor client "
                              "ID metadata documents (or no client_metadata_url is configured): "
                              "pass client_id= for a pre-registered client")
    said = cli_message(error)
    assert "client_id=" not in said and "pass --client-id ID" in said
    assert "$RONDO_CLIENT_SECRET" in said
    assert cli_message(ValueError("plain")) == "plain"
