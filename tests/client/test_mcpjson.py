"""rondo.client.load_mcp_json: the hosts' mcp.json read into typed entries; every refusal names
the server and the field and never echoes a value (env values, headers, URLs hold secrets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rondo.client import ConfigError, ServerEntry, load_mcp_json

SECRET = "s3cr3t-token-value"


def test_stdio_and_url_entries_with_variables_expanded() -> None:
    found = load_mcp_json({"mcpServers": {
        "files": {"command": "python", "args": ["srv.py", "--root", "${ROOT}"],
                  "env": {"KEY": "${KEY}", "MODE": "${MODE:-fast}"}, "cwd": "/tmp"},
        "web": {"url": "https://h.example/${PATH_PART}", "type": "streamable-http",
                "headers": {"Authorization": "Bearer ${KEY}"}, "timeout": 7},
        "off": {"command": "nothing", "disabled": True},
        "hosted": {"command": "x", "description": "kept by a host", "autoApprove": []},
    }}, environ={"ROOT": "/srv", "KEY": SECRET, "PATH_PART": "mcp"})
    assert list(found) == ["files", "web", "hosted"]  # file order; disabled skipped
    files, web = found["files"], found["web"]
    assert files == ServerEntry("files", "stdio", command=("python", "srv.py", "--root", "/srv"),
                                env={"KEY": SECRET, "MODE": "fast"}, cwd="/tmp")
    assert files.target == ["python", "srv.py", "--root", "/srv"]
    assert web.kind == "http" and web.target == "https://h.example/mcp" and web.timeout == 7.0
    assert web.headers == {"Authorization": f"Bearer {SECRET}"}
    assert SECRET not in repr(files) and SECRET not in repr(web)  # repr hides env and headers


def test_vs_code_servers_key_and_a_file_path(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"a": {"type": "sse", "url": "http://h/sse"}}}))
    assert load_mcp_json(path)["a"].kind == "sse"
    assert load_mcp_json(str(path))["a"].url == "http://h/sse"


@pytest.mark.parametrize("document, message", [
    ([], "a JSON object holding"),
    ({"other": {}}, "needs an object \"mcpServers\""),
    ({"mcpServers": {"a": "npx"}}, "server 'a': an entry is an object"),
    ({"mcpServers": {"a": {}}}, "server 'a': give either \"command\""),
    ({"mcpServers": {"a": {"command": "x", "url": "http://h"}}}, "not both or neither"),
    ({"mcpServers": {"a": {"command": "x", "type": "http"}}}, "type 'http' does not go with"),
    ({"mcpServers": {"a": {"url": "http://h", "type": "pipe"}}}, "type must be one of"),
    ({"mcpServers": {"a": {"command": "x", "header": {}}}}, "unknown key 'header'"),
    ({"mcpServers": {"a": {"command": "  "}}}, "command is empty"),
    ({"mcpServers": {"a": {"command": "x", "args": "y"}}}, "args must be a list"),
    ({"mcpServers": {"a": {"command": "x", "args": [1]}}}, r"args\[0\] must be a string"),
    ({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}, "env.K must be a string"),
    ({"mcpServers": {"a": {"command": "x", "headers": {}}}}, "headers go with url"),
    ({"mcpServers": {"a": {"url": "http://h", "env": {}}}}, "env goes with command"),
    ({"mcpServers": {"a": {"url": f"ftp://{SECRET}"}}}, "url must start with http"),
    ({"mcpServers": {"a": {"url": "http://h", "headers": {"Bad Name": SECRET}}}},
     "header 'Bad Name' is not a valid header"),
    ({"mcpServers": {"a": {"url": "http://h", "headers": {"X": f"{SECRET}\r\nY: z"}}}},
     "header 'X' is not a valid header"),
    ({"mcpServers": {"a": {"url": "http://h", "timeout": 0}}}, "timeout must be"),
    ({"mcpServers": {"a": {"url": "http://h", "timeout": True}}}, "timeout must be"),
    ({"mcpServers": {"a": {"url": "http://h", "headers": {"A": "${UNSET_ONE}"}}}},
     r"server 'a': headers.A names \$\{UNSET_ONE\}, which is not set"),
])
def test_refusals_name_the_place_never_the_value(document: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        load_mcp_json(document, environ={})
    assert SECRET not in str(caught.value)


def test_an_unreadable_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_mcp_json(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {"a": {"env": {"K": "' + SECRET + '"')
    with pytest.raises(ConfigError, match=r"is not JSON \(line 1, column \d+\)") as caught:
        load_mcp_json(broken)
    assert SECRET not in str(caught.value)
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (1024 * 1024 + 1))
    with pytest.raises(ConfigError, match="larger than 1048576 bytes"):
        load_mcp_json(huge)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
       st.text(alphabet="ABCXYZ_", min_size=1, max_size=8))
def test_expansion_puts_the_value_in_and_nothing_else(literal: str, name: str) -> None:
    name = "V" + name
    text = literal.replace("$", "") + "${" + name + "}" + literal.replace("$", "")
    found = load_mcp_json({"mcpServers": {"a": {"command": "x", "args": [text]}}},
                          environ={name: "<v>"})
    assert found["a"].command[1] == literal.replace("$", "") + "<v>" + literal.replace("$", "")
