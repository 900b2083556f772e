"""stdio's `LineReader` gives every line once, in order, whatever the reads return at a time;
its writer puts every byte out in order, whatever the writes take at a time.

The reference is a split of the whole input: each line as it is, an oversized one as
TOO_LARGE (once, the reading going on after its newline), a last line without a newline if it
is not blank, then None.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rondo.transport import stdio
from rondo.transport.stdio import LineReader

MAX = 12


def expected(data: bytes) -> list[object]:
    *lines, last = data.split(b"\n")
    out: list[object] = [line if len(line) <= MAX else LineReader.TOO_LARGE for line in lines]
    if len(last) > MAX:
        out.append(LineReader.TOO_LARGE)
    elif last.strip():
        out.append(last)
    return [*out, None]


def read_all(data: bytes, chunk: int, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    monkeypatch.setattr(stdio, "_CHUNK", chunk)
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)  # small: the pipe holds it all
        os.close(write_end)
        reader = LineReader(read_end, MAX)
        out: list[object] = []
        while True:
            line = reader.next_line()
            out.append(line)
            if line is None:
                return out
            assert len(out) <= data.count(b"\n") + 2  # bounded: never the same line again
    finally:
        os.close(read_end)


lines = st.lists(st.binary(max_size=MAX + 6).map(lambda b: b.replace(b"\n", b"x"))
                 | st.sampled_from([b"", b" ", b"{}"]), max_size=12)


@given(lines, st.booleans(), st.integers(1, 40))
def test_lines_come_out_as_a_split_of_the_input_would_give_them(
    parts: list[bytes], trailing: bool, chunk: int
) -> None:
    data = b"\n".join(parts) + (b"\n" if trailing else b"")
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert read_all(data, chunk, monkeypatch) == expected(data)


def test_what_is_left_after_a_line_is_handed_over_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdio, "_CHUNK", 64)
    read_end, write_end = os.pipe()
    os.write(write_end, b"one\ntwo\nthr")
    os.close(write_end)
    reader = LineReader(read_end, MAX)
    assert reader.next_line() == b"one"
    assert reader.rest() == b"two\nthr"  # what the event loop's side is given to serve first
    assert reader.next_line() == b"two"
    assert reader.rest() == b"thr"
    os.close(read_end)


# -- the writer: one write for the usual line, every byte in order whatever the pipe takes ------


class FakeOut:
    """`os.write` stand-in: takes at most `take` bytes per call; each call first takes the next
    of `script` (an exception to raise, or None for a normal write) while there is one."""

    def __init__(self, take: int, script: list[BaseException | None] | None = None) -> None:
        self.take, self.script, self.data, self.calls = take, list(script or []), b"", 0

    def write(self, fd: int, data: Any) -> int:
        self.calls += 1
        failure = self.script.pop(0) if self.script else None
        if failure is not None:
            raise failure
        chunk = bytes(data[: self.take])
        self.data += chunk
        return len(chunk)


def writer_with(monkeypatch: pytest.MonkeyPatch, out: FakeOut) -> Any:
    monkeypatch.setattr(stdio, "_wait_writable", lambda fd: None)
    return stdio._writer(99, out.write)


def test_the_usual_line_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    out = FakeOut(take=1 << 20)
    writer_with(monkeypatch, out)({"id": 1, "result": {}})
    assert out.data == b'{"id":1,"result":{}}\n' and out.calls == 1


@pytest.mark.parametrize("take", [1, 3, 7])
def test_short_writes_deliver_every_byte_in_order(monkeypatch: pytest.MonkeyPatch, take: int) -> None:
    out = FakeOut(take=take)
    send = writer_with(monkeypatch, out)
    send({"id": 1, "text": "x" * 50})
    send({"id": 2})
    assert out.data == b'{"id":1,"text":"' + b"x" * 50 + b'"}\n{"id":2}\n'


def test_a_full_pipe_is_waited_on_and_then_written(monkeypatch: pytest.MonkeyPatch) -> None:
    out = FakeOut(take=4, script=[BlockingIOError(), None, BlockingIOError()])
    writer_with(monkeypatch, out)({"id": 7})
    assert out.data == b'{"id":7}\n'


@pytest.mark.parametrize("gone", [BrokenPipeError, ConnectionResetError])
def test_a_closed_stdout_is_output_closed(monkeypatch: pytest.MonkeyPatch, gone: type) -> None:
    for script in ([gone(), gone()], [None, gone()]):  # at once, or after part of the line
        out = FakeOut(take=2, script=script)
        with pytest.raises(stdio.OutputClosed, match="^$"):  # raised bare: the type is the message
            writer_with(monkeypatch, out)({"id": 7})
