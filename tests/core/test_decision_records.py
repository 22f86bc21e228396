"""The pass's decision records keep a frozen record's contract, compiled or not.

``core.decisions`` is compiled (``_compiled.HOT``) and its per-pass records are written once
(``core.set_once``) rather than frozen dataclasses, whose ``__init__`` stays interpreted.  They
must still pickle and deep-copy (a switched run deep-copies the starts waiting out a launch
latency; plan's workers pickle what they return), refuse a second write, compare and hash by
every field, and let ``dataclasses.replace`` rebuild them (``core.decide`` adds the order to a
pass's decisions).  A compiled record does not unpickle by the default protocol (it sets each
field on an empty instance, which the record's ``__setattr__`` refuses): each rebuilds itself
through its constructor (``__reduce__``).  Run with a compiled copy's ``src`` on ``PYTHONPATH``
to check the compiled form."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from allotment.core.decisions import (
    Decisions,
    NodeReport,
    Preemption,
    Ranked,
    Refusal,
    Reservation,
    Start,
)
from allotment.core.session_grace import Notice
from allotment.core.snapshot import KeptHold

# every field away from its default, so a field a rebuild forgot shows
START = Start("j1", (("n1", 4), ("n2", 4)), False, "fits", True)
PREEMPTION = Preemption("j2", "j1", "reclaim", 120.5, "over-served")
RESERVATION = Reservation("j3", ("n3", "n4"), 3600.0, "highest-ranked blocked gang")
REPORT = NodeReport("n5", "draining", ("j4",), True, "protected until 7200")
REFUSAL = Refusal("j6", "min runtime over the cap")
RANKED = Ranked("j7", "team-a", 1, 0, (0.5, 0.25), 3.0, "score ", True)
NOTICE = Notice("j8", "j1", "reclaim", 60.0, 300.0, "session stopped after its grace")
DECISIONS = Decisions(
    starts=(START,), preemptions=(PREEMPTION,), reservations=(RESERVATION,), nodes=(REPORT,), order=(RANKED,),
    wake_at=9000.0, refusals=(REFUSAL,), notices=(NOTICE,), kept_holds=(KeptHold("j3", 3600.0),),
)
RECORDS = [START, PREEMPTION, RESERVATION, REPORT, REFUSAL, NOTICE, DECISIONS]
IDS = [type(r).__name__ for r in RECORDS]


def test_every_field_of_the_sample_decisions_differs_from_its_default() -> None:
    for record in (START, DECISIONS):
        params = inspect.signature(type(record)).parameters
        assert list(params) == [f.name for f in dataclasses.fields(record)]
        for name, p in params.items():
            assert p.default is inspect.Parameter.empty or getattr(record, name) != p.default, name


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_a_decision_record_unpickles_equal_to_itself(record: object, protocol: int) -> None:
    back = pickle.loads(pickle.dumps(record, protocol=protocol))
    assert type(back) is type(record) and back == record


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_a_decision_record_deep_copies_equal_to_itself(record: object) -> None:
    assert copy.deepcopy(record) == record and copy.copy(record) == record


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_a_decision_record_cannot_be_changed(record: object) -> None:
    name = dataclasses.fields(record)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, name, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(record, name)
    assert getattr(record, name) is not None


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_a_decision_record_is_hashed_and_compared_by_every_field(record: object) -> None:
    again = pickle.loads(pickle.dumps(record))
    assert hash(again) == hash(record) and len({record, again}) == 1
    for f in dataclasses.fields(record):  # type: ignore[arg-type]
        value = getattr(record, f.name)
        other_value = "other" if isinstance(value, str) else 1.5 if isinstance(value, float) else (
            not value if isinstance(value, bool) else ())  # of the field's type (compiled, __init__ checks it)
        other = dataclasses.replace(record, **{f.name: other_value})  # type: ignore[type-var]
        assert other != record and getattr(other, f.name) == other_value, f.name


def test_replace_adds_the_order_to_a_pass_s_decisions_as_decide_does() -> None:
    d = Decisions((START,), (PREEMPTION,))
    full = dataclasses.replace(d, order=(RANKED,), wake_at=1.0, refusals=(REFUSAL,))
    assert full == Decisions((START,), (PREEMPTION,), order=(RANKED,), wake_at=1.0, refusals=(REFUSAL,))
    assert d.order == () and d.wake_at is None  # the pass's own record unchanged
    assert Decisions() == Decisions((), (), (), (), (), None, (), (), ())
