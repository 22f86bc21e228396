"""``decode_line`` is ``DECODER.decode`` (same object or same error), and ``decode_again``
reads every line ``decode_line`` accepts to the same object.

Both call the C scanner directly, so what ``decode`` did around it (skip white space before,
refuse anything but white space after, turn a failed scan into a positioned error) is theirs
to keep; each case here is one of those edges."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allotment.traces.line_checker import DECODER, decode_again, decode_line


def _outcome(decode: Any, raw: str) -> tuple[str, str]:
    try:
        return "ok", repr(decode(raw))
    except Exception as exc:  # the exception is the outcome compared
        return type(exc).__name__, str(exc)


CASES = [
    '{"id":"1","submit":0,"account":"a","gpus":1,"work":19.5,"resumable":true,"kind":"debug"}',
    '{"id":"1","submit":0,"account":"a","gpus":1,"work":19}\n',
    '{"id":"1","submit":0,"account":"a","gpus":1,"work":19}\r\n',
    ' {"a":1}',
    '\t{"a":1} \t',
    '{"a":1} x',
    '{"a":1}{"b":2}',
    '{"a":1}\x0c',
    '\ufeff{"a":1}',
    '{"a":1,"a":2}',
    '{"a":NaN}',
    '{"a":-Infinity}',
    '{"a":123456789012345678901234567890}',
    '{"a":"\\ud800"}',
    '{"a":"x\ty"}',
    '{"a":1,}',
    '{"a":',
    '',
    ' ',
    'x',
    '[1,2]',
    '"text"',
    '{"x":{"a":1,"a":2}}',
]


@pytest.mark.parametrize("raw", CASES)
def test_a_line_decodes_as_the_strict_decoder_reads_it(raw: str) -> None:
    assert _outcome(decode_line, raw) == _outcome(DECODER.decode, raw)


@pytest.mark.parametrize("raw", CASES)
def test_a_line_accepted_once_decodes_again_to_the_same(raw: str) -> None:
    first = _outcome(decode_line, raw)
    if first[0] == "ok":
        assert _outcome(decode_again, raw) == first


_keys = st.sampled_from(["a", "b", "id", ":", '"', "\\", "é"])
_values = st.one_of(
    st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4),
    st.booleans(), st.none(), st.lists(st.integers(0, 3), max_size=2),
)


@given(
    pairs=st.lists(st.tuples(_keys, _values), max_size=6),
    before=st.sampled_from(["", " ", "\t", "\ufeff"]),
    after=st.sampled_from(["", "\n", "\r\n", " ", " x", "}", "\x0c"]),
)
def test_any_line_decodes_as_the_strict_decoder_reads_it(
    pairs: list[tuple[str, Any]], before: str, after: str
) -> None:
    raw = before + "{" + ",".join(json.dumps(k) + ":" + json.dumps(v) for k, v in pairs) + "}" + after
    first = _outcome(decode_line, raw)
    assert first == _outcome(DECODER.decode, raw)
    if first[0] == "ok":
        assert _outcome(decode_again, raw) == first
