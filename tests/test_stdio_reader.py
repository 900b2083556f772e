"""stdio's `LineReader` gives every line once, in order, whatever the reads return at a time.

The reference is a split of the whole input: each line as it is, an oversized one as
TOO_LARGE (once, the reading going on after its newline), a last line without a newline if it
is not blank, then None.
"""

from __future__ import annotations

import os

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
