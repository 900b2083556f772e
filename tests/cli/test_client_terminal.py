"""`rondo call`: typed prompts, scripted answers, and a real run against the example server."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rondo.cli.prompts import FileAnswers, Prompter, parse_value
from rondo.client.handlers import ElicitRequest

ROOT = Path(__file__).resolve().parents[1].parent

FORM = ElicitRequest(mode="form", message="Tell me", requested_schema={
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "default": "Ann"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "ok": {"type": "boolean", "default": True},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
        "note": {"type": "string"},
    },
    "required": ["age", "size"],
})


def prompter(typed: str) -> tuple[Prompter, io.StringIO]:
    out = io.StringIO()
    return Prompter(io.StringIO(typed), out), out


def test_form_prompts_validate_retry_and_offer_defaults() -> None:
    ask, out = prompter("\nold\n-1\n42\n\n2\n1,3\n\n")
    answer = ask(FORM)
    assert answer == {"action": "accept", "content": {
        "name": "Ann", "age": 42, "ok": True, "size": "l", "tags": ["a", "c"]}}
    shown = out.getvalue()
    assert "enter a whole number" in shown and "must be at least 0" in shown
    assert "[Ann]" in shown and "[y]" in shown and "2. Large (l)" in shown


@pytest.mark.parametrize(("typed", "action"), [(":decline\n", "decline"), (":cancel\n", "cancel"), ("", "cancel")])
def test_refusing_a_form(typed: str, action: str) -> None:
    ask, _ = prompter(typed)
    assert ask(FORM) == {"action": action}


def test_url_consent_shows_the_link() -> None:
    request = ElicitRequest(mode="url", message="Sign in", url="https://xn--e1afmkfd.example/login")
    ask, out = prompter("y\n")
    assert ask(request) == {"action": "accept"}
    assert "https://xn--e1afmkfd.example/login" in out.getvalue() and "check it carefully" in out.getvalue()
    ask, _ = prompter("\n")
    assert ask(request) == {"action": "decline"}


@pytest.mark.parametrize(("prop", "raw", "value"), [
    ({"type": "number"}, "2.5", 2.5),
    ({"type": "boolean"}, "no", False),
    ({"type": "string", "enum": ["x", "y"]}, "y", "y"),
    ({"type": "string", "format": "date"}, "2026-07-28", "2026-07-28"),
])
def test_parse_value(prop: dict[str, Any], raw: str, value: Any) -> None:
    assert parse_value(prop, raw) == value


@pytest.mark.parametrize(("prop", "raw", "needle"), [
    ({"type": "integer"}, "1.5", "enter a whole number"),
    ({"type": "boolean"}, "maybe", "answer y or n"),
    ({"type": "string", "enum": ["x"]}, "z", "choose one of: x"),
    ({"type": "string", "maxLength": 2}, "abc", "must be at most 2 characters"),
    ({"type": "string", "format": "email"}, "nope", "not a valid email"),
])
def test_parse_value_refuses(prop: dict[str, Any], raw: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        parse_value(prop, raw)


def test_file_answers_in_order() -> None:
    answers = FileAnswers([{"color": "red"}, {"action": "decline"}, True])
    assert answers(FORM) == {"action": "accept", "content": {"color": "red", "name": "Ann", "ok": True}}
    assert answers(FORM) == {"action": "decline"}
    assert answers(ElicitRequest(mode="url", message="go", url="https://x.example")) == {"action": "accept"}
    with pytest.raises(Exception, match="no answer left"):
        answers(FORM)


def test_file_answers_apply_the_form_defaults_like_the_prompt() -> None:
    answers = FileAnswers([{"age": 30, "size": "s"}, {"action": "accept", "content": {"age": 1, "size": "l", "name": "Bo"}}])
    assert answers(FORM) == {"action": "accept", "content": {"age": 30, "size": "s", "name": "Ann", "ok": True}}
    assert answers(FORM) == {"action": "accept", "content": {"age": 1, "size": "l", "name": "Bo", "ok": True}}
    typed, _ = prompter("\n30\n\n1\n\n\n")  # the same defaults at the interactive prompt
    assert typed(FORM)["content"] == {"name": "Ann", "age": 30, "ok": True, "size": "s"}


@pytest.mark.slow
def test_rondo_call_over_stdio_with_an_answers_file(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"color": "green"}, {"size": "medium"}]))
    target = f"{sys.executable} {ROOT / 'examples' / 'preferences.py'} --stdio"
    done = subprocess.run(
        [sys.executable, "-m", "rondo.cli.call", target, "profile", '{"user": "ann"}', "--answers", str(answers)],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ann: color green, size medium."
    listing = subprocess.run([sys.executable, "-m", "rondo.cli.call", target],
                             capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert listing.stdout.split("\n")[:2] == ["tools:", "  favorite_color(user: string)  Ask the user for their favorite color."]


@pytest.mark.slow
def test_rondo_call_follows_a_task_showing_its_status_and_asking_in_it() -> None:
    target = f"{sys.executable} {ROOT / 'examples' / 'deploy.py'} --stdio"
    done = subprocess.run(
        [sys.executable, "-m", "rondo.cli.call", target, "deploy", '{"service": "api"}'],
        input="staging\nn\n", capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "api is warm on staging; traffic not switched."
    # (piped input is not echoed, so a status line may follow a prompt on the same line)
    shown = [line[line.index("[task "):] for line in done.stderr.splitlines() if "[task " in line]
    assert shown[0].endswith("working: deploying api to staging")
    # The whole task id, as client.task(ID) takes it to resume the task by hand.
    assert {line[len("[task "):line.index("]")] for line in shown} == {shown[0][6:38]}
    assert len(shown[0][6:38]) == 32 and shown[0][38] == "]"
    assert any(line.endswith("working: pushing api") for line in shown)
    assert any(" input_required" in line for line in shown)
    assert shown[-1].split("] ")[1].startswith("completed")
    # Both questions were asked at this prompt: the one before the task and the one inside it.
    assert "Deploy to which environment?" in done.stderr and "Switch traffic over?" in done.stderr
