"""benchmarks/inprocess.py still drives every path it names (it backs the instruction counts in
benchmarks/README.md). Functional only: nothing here is timed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rondo.wire.errors import STATE_REJECTED_MESSAGE
from tests.helpers.modules import child_env

ROOT = Path(__file__).resolve().parents[1].parent
pytestmark = pytest.mark.slow  # each test spawns a Python process


@pytest.mark.parametrize("which", ["floor", "rondo"])
@pytest.mark.parametrize("path", ["add", "leg1", "leg2", "flow", "stdio"])
def test_the_in_process_driver_answers_every_path(which: str, path: str) -> None:
    if which == "floor" and path in ("leg1", "leg2", "flow"):
        path = "flow"  # the floor answers both legs too; one run is enough for it
    done = subprocess.run([sys.executable, "benchmarks/inprocess.py", which, path, "3"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{which} {path}:" in done.stdout and "us per op" in done.stdout


@pytest.mark.parametrize("which", ["floor", "rondo"])
@pytest.mark.parametrize("path", ["add", "flow"])
def test_the_driver_sends_the_http_paths_through_each_targets_protocol(which: str, path: str) -> None:
    done = subprocess.run([sys.executable, "benchmarks/inprocess.py", which, path, "3", "--protocol"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{which} {path}:" in done.stdout and "through the protocol" in done.stdout


def test_a_wrong_answer_through_the_protocol_fails_the_driver(tmp_path: Path) -> None:
    # The answer checked is the body the protocol wrote: a wrong add fails there too.
    (tmp_path / "server.py").write_text(
        "import rondo\nserver = rondo.Server('x', '1', warn_undocumented=False)\n"
        "@server.tool\ndef add(a: int, b: int) -> str:\n    return str(a - b)\n")
    (tmp_path / "inprocess.py").write_text((ROOT / "benchmarks/inprocess.py").read_text())
    done = subprocess.run([sys.executable, str(tmp_path / "inprocess.py"), "rondo", "add", "3",
                           "--protocol"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "AssertionError" in done.stderr


def test_a_wrong_answer_fails_the_driver(tmp_path: Path) -> None:
    # The driver checks every answer: a fixture whose add is wrong makes it fail.
    (tmp_path / "server.py").write_text(
        "import rondo\nserver = rondo.Server('x', '1', warn_undocumented=False)\n"
        "@server.tool\ndef add(a: int, b: int) -> str:\n    return str(a - b)\n")
    script = (ROOT / "benchmarks/inprocess.py").read_text()
    (tmp_path / "inprocess.py").write_text(script)
    done = subprocess.run([sys.executable, str(tmp_path / "inprocess.py"), "rondo", "add", "3"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "AssertionError" in done.stderr


@pytest.mark.parametrize("which", ["floor", "server"])
@pytest.mark.parametrize("what", ["add", "flow"])
def test_the_sequential_client_drives_a_real_server(which: str, what: str, free_port: int) -> None:
    # benchmarks/sequential.py backs server_instructions.sh: it must reach a live fixture over
    # HTTP and check every answer (without valgrind here).
    served = subprocess.Popen([sys.executable, f"benchmarks/{which}.py", "http", str(free_port)],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        done = subprocess.run([sys.executable, "benchmarks/sequential.py", str(free_port), "5", what],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    finally:
        served.terminate()
        served.wait(10)


def test_the_cold_call_timer_runs_every_piece() -> None:
    # benchmarks/cold_calls.py backs the stdio paragraph of benchmarks/README.md.
    done = subprocess.run([sys.executable, "benchmarks/cold_calls.py", "20", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 4 and all(line.endswith(" us") for line in lines)
    assert lines[-1].startswith("rondo: the whole answer")


def test_the_floor_answers_what_rondo_answers_less_the_sealing() -> None:
    # The floor's ratio is to count framework work, not a shorter answer: its results must be
    # rondo's (the same question, the same `_meta.serverInfo`), the requestState's text aside.
    done = subprocess.run([sys.executable, "-c", FLOOR_AGAINST_RONDO], cwd=ROOT, env=child_env("benchmarks"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    floor, rondo = (json.loads(line) for line in done.stdout.splitlines())
    assert rondo[1]["requestState"].startswith("s1.") and floor[1]["requestState"] == "floor"
    for leg in (floor[1], rondo[1]):
        del leg["requestState"]
    assert floor == rondo
    assert rondo[0]["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "bench",
                                                                        "version": "1.0.0"}


FLOOR_AGAINST_RONDO = """
import asyncio, json, logging, sys
logging.disable(logging.WARNING)
import inprocess
for which in ("floor", "rondo"):
    app = inprocess.load(which)
    async def answers():
        add = json.loads(await inprocess.call(app, "add", inprocess.ADD))["result"]
        leg1 = json.loads(await inprocess.call(app, "ask_color", inprocess.LEG1))["result"]
        body = inprocess.leg2_body("color", leg1["requestState"])
        leg2 = json.loads(await inprocess.call(app, "ask_color", body))["result"]
        return [add, leg1, leg2]
    print(json.dumps(asyncio.run(answers())))
"""


def test_the_clear_state_fixture_answers_as_rondo_with_its_state_in_plain_json() -> None:
    # benchmarks/legs.py subtracts it from rondo to price sealing and opening: it must answer
    # both legs as rondo does, its state being the envelope's own JSON, unsigned.
    done = subprocess.run([sys.executable, "-c", CLEAR_AGAINST_RONDO], cwd=ROOT, env=child_env("benchmarks"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    clear, rondo = (json.loads(line) for line in done.stdout.splitlines())
    state = json.loads(clear[0]["requestState"])
    assert set(state) == {"q"} and set(state["q"]) == {"color"}  # the question's digest
    assert rondo[0]["requestState"].startswith("s1.")
    for leg in (clear[0], rondo[0]):
        del leg["requestState"]
    assert clear == rondo
    assert clear[1]["content"] == [{"type": "text", "text": "blue"}]


CLEAR_AGAINST_RONDO = """
import asyncio, json, logging, sys
logging.disable(logging.WARNING)
import inprocess, server
import server_clear_state  # puts its ClearState on the fixture's server
from rondo.state import StatePolicy
from rondo.transport.http import HttpApp
app = HttpApp(server.server)
async def answers():
    leg1 = json.loads(await inprocess.call(app, "ask_color", inprocess.LEG1))["result"]
    body = inprocess.leg2_body("color", leg1["requestState"])
    leg2 = json.loads(await inprocess.call(app, "ask_color", body))["result"]
    return [leg1, leg2]
print(json.dumps(asyncio.run(answers())))
server.server.state_policy = StatePolicy()  # rondo as served: sealed
print(json.dumps(asyncio.run(answers())))
"""


def test_the_sealed_floor_seals_and_verifies_its_state() -> None:
    # legs.py and server_instructions.sh price the codec by it: its leg 1 must carry a real
    # token, its leg 2 must verify it, and a token for other params must be refused.
    done = subprocess.run([sys.executable, "-c", SEALED_FLOOR], cwd=ROOT, env=child_env("benchmarks"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["s1.", "blue", "Rejected"]


SEALED_FLOOR = """
import json, sys
import floor_sealed
from rondo.state.codec import Rejected
def call(params):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return json.loads(floor_sealed.answer(json.dumps(body).encode()))["result"]
leg1 = call({"name": "ask_color", "arguments": {}})
token = leg1["requestState"]
print(token[:3])
answer = {"color": {"action": "accept", "content": {"color": "blue"}}}
leg2 = call({"name": "ask_color", "arguments": {}, "inputResponses": answer, "requestState": token})
print(leg2["content"][0]["text"])
try:
    call({"name": "ask_color", "arguments": {"x": 1}, "inputResponses": answer,
          "requestState": token})
except Rejected:
    print("Rejected")
"""


def test_the_least_sealing_floor_seals_verifies_and_refuses() -> None:
    # legs.py sets it beside floor_sealed as the lower bound of any sealing: it must still seal
    # (leg 2 answers only with the token its leg 1 gave) and refuse other params, a flipped
    # byte and an expired token.
    done = subprocess.run([sys.executable, "-c", LEAST_SEALED_FLOOR], cwd=ROOT, env=child_env("benchmarks"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["blue", "Refused", "Refused", "Refused", "Refused"]


LEAST_SEALED_FLOOR = """
import base64, json, sys, time
import floor_minseal
def call(params):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return json.loads(floor_minseal.answer(json.dumps(body).encode()))["result"]
def refused(arguments, token):
    try:
        call({"name": "ask_color", "arguments": arguments, "inputResponses": answer,
              "requestState": token})
    except floor_minseal.Refused:
        print("Refused")
token = call({"name": "ask_color", "arguments": {}})["requestState"]
answer = {"color": {"action": "accept", "content": {"color": "blue"}}}
leg2 = call({"name": "ask_color", "arguments": {}, "inputResponses": answer, "requestState": token})
print(leg2["content"][0]["text"])
refused({"x": 1}, token)
raw = bytearray(base64.b64decode(token))
raw[3] ^= 1
refused({}, base64.b64encode(bytes(raw)).decode())
raw[3] ^= 1
raw[-1] ^= 1
refused({}, base64.b64encode(bytes(raw)).decode())
later = time.time() + 400
time.time = lambda: later
refused({}, token)
"""

def test_the_pieces_driver_checks_and_prices_every_piece_of_a_leg() -> None:
    # Its own check() runs first: both legs answer as served and the token opens to the envelope.
    done = subprocess.run([sys.executable, "benchmarks/pieces.py", "--number", "3"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 14 and all(line.endswith("us per call (hot)") for line in lines)
    assert any(line.startswith("open_token") for line in lines)
    wrong = subprocess.run([sys.executable, "benchmarks/pieces.py", "nonsense"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert wrong.returncode != 0 and "unknown piece 'nonsense'" in wrong.stderr


def test_rondo_with_the_least_sealing_answers_as_rondo_and_refuses_what_it_should() -> None:
    # legs.py sets it beside rondo as the best a flow in rondo could do with the cheapest codec:
    # it must answer both legs as rondo does, and still refuse a flipped byte, other params and
    # an expired token with rondo's own -32602.
    done = subprocess.run([sys.executable, "-c", LEAST_SEALED_RONDO], cwd=ROOT, env=child_env("benchmarks"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    least, rondo, refusals = (json.loads(line) for line in done.stdout.splitlines())
    assert not least[0]["requestState"].startswith("s1.") and rondo[0]["requestState"].startswith("s1.")
    for leg in (least[0], rondo[0]):
        del leg["requestState"]
    assert least == rondo
    assert least[1]["content"] == [{"type": "text", "text": "blue"}]
    assert refusals == [[-32602, STATE_REJECTED_MESSAGE]] * 4


LEAST_SEALED_RONDO = """
import asyncio, base64, json, logging, sys, time
logging.disable(logging.WARNING)
import inprocess, server
import server_minseal  # puts its LeastSealing on the fixture's server
from rondo.state import StatePolicy
from rondo.transport.http import HttpApp
app = HttpApp(server.server)
async def post(body):
    return json.loads(await inprocess.call(app, "ask_color", body))
async def answers():
    leg1 = (await post(inprocess.LEG1))["result"]
    leg2 = (await post(inprocess.leg2_body("color", leg1["requestState"])))["result"]
    return [leg1, leg2]
async def refusals():
    token = (await post(inprocess.LEG1))["result"]["requestState"]
    raw = bytearray(base64.b64decode(token))
    raw[3] ^= 1
    flipped = base64.b64encode(bytes(raw)).decode()
    other = json.loads(inprocess.leg2_body("color", token))
    other["params"]["arguments"] = {"x": 1}
    async def refused(body):
        error = (await post(body))["error"]
        return [error["code"], error["message"]]
    codes = [await refused(inprocess.leg2_body("color", flipped)),
             await refused(inprocess.leg2_body("color", "not base64!")),
             await refused(json.dumps(other).encode())]
    later = time.time() + 400
    time.time = lambda: later
    codes.append(await refused(inprocess.leg2_body("color", token)))
    return codes
print(json.dumps(asyncio.run(answers())))
server.server.state_policy = StatePolicy()  # rondo as served: its own codec
print(json.dumps(asyncio.run(answers())))
server.server.state_policy = server_minseal.LeastSealing(secret=b"m" * 32)
print(json.dumps(asyncio.run(refusals())))
"""
