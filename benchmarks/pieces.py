"""What each piece of an MRTR leg costs on its own, called the way the express lane calls it.

    .venv/bin/python benchmarks/pieces.py                  # hot wall time per call, every piece
    .venv/bin/python benchmarks/pieces.py --instructions   # instructions per call (cachegrind)
    .venv/bin/python benchmarks/pieces.py seal open_token  # only these (--number N: calls per repeat)

Pieces run on `benchmarks/server.py`'s server and its `ask_color` requests. `--instructions`
runs each piece 200 and 2,200 times under cachegrind and prints the difference per call, so
start-up cancels out (about +-0.5k of noise per figure: start-up itself moves by a few hundred
thousand instructions from run to run); the first piece, nothing, is the loop's own share of
every figure. Admission here finds the question's facts itself; in a leg it takes the ones
`ctx.ask` found (`mrtr.ask.AskBook.digests`), so it costs a question's facts less there. Hot figures run the same call in a tight loop: caches
stay warm, so they price the code, not a served request (where cold caches make the number of
distinct functions touched count more; see README "Where a request's time goes").
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import inprocess  # noqa: E402
import msgspec  # noqa: E402
import server as fixture  # noqa: E402

from rondo.core.express import answer_tool  # noqa: E402
from rondo.mrtr import questions  # noqa: E402
from rondo.mrtr.admission import admit  # noqa: E402
from rondo.mrtr.result import AskInterrupt  # noqa: E402
from rondo.server.context import Context  # noqa: E402
from rondo.state import codec  # noqa: E402
from rondo.transport.http import HttpApp  # noqa: E402
from rondo.wire.envelope import envelope  # noqa: E402
from rondo.wire.jsonrpc import request_shape  # noqa: E402

logging.disable(logging.WARNING)  # the per-process key note
CORE = HttpApp(fixture.server).core
SERVER = fixture.server
DIALECT = CORE.modern
POLICY = SERVER.state_policy
assert POLICY is not None
KEYS = POLICY.keyring


def _emit(note: dict[str, Any]) -> None:
    pass


LEG1 = msgspec.json.decode(inprocess.LEG1)
P1 = LEG1["params"]
ENV1 = envelope(P1)
_first = answer_tool(CORE, 1, P1, ENV1, _emit)
assert _first is not None
TOKEN = _first["result"]["requestState"]
LEG2_BODY = inprocess.leg2_body("color", TOKEN)
LEG2 = msgspec.json.decode(LEG2_BODY)
P2 = LEG2["params"]
ENV2 = envelope(P2)
FACTS = questions.question(fixture.COLOR)
ANSWER = P2["inputResponses"]["color"]
ENVELOPE = {"q": {"color": FACTS.digest}}


def _raise() -> None:
    raise AskInterrupt({})


def _interrupt() -> None:
    try:  # noqa: SIM105 (the try/except is what is priced: ctx.ask's interrupt)
        _raise()
    except AskInterrupt:
        pass


def _context() -> Context:
    return Context.for_call(SERVER, 1, "tools/call", P1, ENV1, DIALECT, emit=_emit)


CTX = _context()


def _admit() -> None:
    admit(CTX, {"color": fixture.COLOR}, True)  # reads the context, changes nothing in it


PIECES: dict[str, Callable[[], Any]] = {
    "nothing (the loop's own cost)": lambda: None,
    "decode leg 2": lambda: msgspec.json.decode(LEG2_BODY),
    "request_shape": lambda: request_shape(LEG2),
    "envelope": lambda: envelope(P2),
    "Context": _context,
    "question facts": lambda: questions.question(fixture.COLOR),
    "AskInterrupt raised and caught": _interrupt,
    "read the answer": lambda: FACTS.kind.read_answer(fixture.COLOR, ANSWER),
    "admission (its own question facts)": _admit,
    "binding": lambda: codec.binding(P2, None),
    "seal": lambda: codec.seal(ENVELOPE, "tools/call", "bench", P1, None, KEYS, 300, False, None,
                               time.time()),
    "open_token": lambda: codec.open_token(TOKEN, "tools/call", "bench", P2, None, KEYS, time.time(),
                                           10, None),
    "leg 1 tool call (answer_tool)": lambda: answer_tool(CORE, 1, P1, ENV1, _emit),
    "leg 2 tool call (answer_tool)": lambda: answer_tool(CORE, 2, P2, ENV2, _emit),
}


def _slug(name: str) -> str:
    return name.split(" (")[0].replace(" ", "_")


def _by_slug(slug: str) -> str:
    for name in PIECES:
        if _slug(name) == slug or name == slug:
            return name
    raise SystemExit(f"unknown piece {slug!r}; choose from {', '.join(map(_slug, PIECES))}")


def check() -> None:
    """Every piece does what it prices: the legs answer as served, the token opens."""
    assert answer_tool(CORE, 1, P1, ENV1, _emit)["result"]["resultType"] == "input_required"  # type: ignore[index]
    done = answer_tool(CORE, 2, P2, ENV2, _emit)
    assert done is not None and done["result"]["content"][0]["text"] == "blue"
    assert codec.open_token(TOKEN, "tools/call", "bench", P2, None, KEYS, time.time(), 10, None) == ENVELOPE
    assert FACTS.kind.read_answer(fixture.COLOR, ANSWER).content == {"color": "blue"}


def instructions(name: str) -> float:
    def count(n: int) -> int:
        out = HERE / "results" / f"pieces.{_slug(name)}.{n}.cg"
        out.parent.mkdir(exist_ok=True)
        subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                        f"--cachegrind-out-file={out}", sys.executable, __file__, "--loop",
                        _slug(name), str(n)], check=True, capture_output=True)
        total = next(line for line in out.read_text().splitlines() if line.startswith("summary"))
        out.unlink()
        return int(total.split()[1])

    return (count(2200) - count(200)) / 2000


def main(argv: list[str]) -> int:
    if argv[:1] == ["--loop"]:  # under cachegrind: run one piece n times
        piece = PIECES[_by_slug(argv[1])]
        for _ in range(int(argv[2])):
            piece()
        return 0
    counted = "--instructions" in argv
    number = 2000
    if "--number" in argv:  # calls per timed repeat (the tests run a few)
        at = argv.index("--number")
        number = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    names = [_by_slug(a) for a in argv if not a.startswith("--")] or list(PIECES)
    check()
    for name in names:
        if counted:
            print(f"{name:34s} {instructions(name) / 1000:7.1f}k instructions per call", flush=True)
        else:
            seconds = min(timeit.repeat(PIECES[name], number=number, repeat=7)) / number
            print(f"{name:34s} {seconds * 1e6:7.2f} us per call (hot)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
