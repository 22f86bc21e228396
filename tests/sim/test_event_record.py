"""``Event`` is an immutable record with the API of the frozen dataclass it replaced
(sim/events.py says why it is a plain class): same fields in the same order, equality,
hashing, ``replace`` and the JSON round trip, compiled or not."""

from __future__ import annotations

import inspect
import json
from dataclasses import FrozenInstanceError

import pytest

from allotment.sim.events import _FIELDS, Event, RunHeader, event_from_json
from allotment.sim.metrics import Recorder

# one value per field, each different from ``_start``'s and of the field's type (compiled, the
# constructor checks types)
_OTHER = (9.0, "end", "j2", "vision", 16, ("n3",), (16,), False, 1.5, 60.0, True, "j3", "reclaim", True,
          0.25, 3.5, 42.0, "n9", "unhealthy", "why", "train", "j0", 4, 7200.0)


def _start() -> Event:
    return Event(5.0, "start", "j1", "lm", 8, nodes=("n1", "n2"), node_gpus=(4, 4), allocated=True,
                 charged_gpus=8.0, reason="fits")


def test_the_fields_are_the_constructors_parameters_in_order() -> None:
    assert list(inspect.signature(Event).parameters) == list(_FIELDS)
    assert _FIELDS[:5] == ("t", "event", "job", "account", "gpus") and _FIELDS[-5:] == ("reason", "kind", "chain", "chain_jobs", "deadline")
    e = Event(*_OTHER)
    assert tuple(getattr(e, f) for f in _FIELDS) == _OTHER == e.astuple()


def test_every_field_but_t_and_event_defaults_to_none() -> None:
    e = Event(1.0, "resume")
    assert e.astuple() == (1.0, "resume") + (None,) * 22


@pytest.mark.parametrize("field", ["t", "event", "job", "nodes", "reason"])
def test_an_event_cannot_be_changed(field: str) -> None:
    e = _start()
    with pytest.raises(FrozenInstanceError):
        setattr(e, field, None)
    with pytest.raises(FrozenInstanceError):
        delattr(e, field)
    with pytest.raises(AttributeError):
        e.extra = 1  # type: ignore[attr-defined]
    assert e == _start()


def test_events_are_equal_and_hash_alike_exactly_when_every_field_is_equal() -> None:
    a, b = _start(), _start()
    assert a == b and hash(a) == hash(b)
    assert (a != b) is False  # __ne__ too
    assert len({a, b}) == 1
    for f, v in zip(_FIELDS, _OTHER, strict=True):
        other = a.replace(**{f: v})
        assert other != a and getattr(other, f) == v
    assert a != a.astuple()  # not a tuple


def test_replace_copies_with_the_changes_and_refuses_unknown_fields() -> None:
    a = _start()
    b = a.replace(t=7.5, reason="later")
    assert (b.t, b.reason, a.t, a.reason) == (7.5, "later", 5.0, "fits")
    assert b.astuple()[2:-5] == a.astuple()[2:-5] and b.astuple()[-4:] == a.astuple()[-4:]
    with pytest.raises(TypeError, match="no field"):
        a.replace(when=1.0)


def test_repr_names_every_field() -> None:
    r = repr(Event(1.0, "end", "j", charged_gpu_hours=2.5))
    assert r.startswith("Event(t=1.0, event='end', job='j', account=None,") and "charged_gpu_hours=2.5" in r


def test_an_event_round_trips_through_its_json_line() -> None:
    e = _start()
    d = e.to_json()
    assert list(d) == ["t", "event", "job", "account", "gpus", "nodes", "node_gpus", "allocated", "charged_gpus",
                       "reason"]
    assert d["nodes"] == ["n1", "n2"]
    assert event_from_json(json.loads(json.dumps(d))) == e


def test_the_recorder_refuses_an_unknown_event_kind() -> None:
    h = RunHeader("budgets", "c", 1, 3600.0, 8, {"n1": 8}, {"lm": 8.0}, {}, 3600.0, 8, teams=("lm",))
    with pytest.raises(ValueError, match="unknown event kind 'explode'"):
        Recorder(h).consume(Event(0.0, "explode"))


def test_the_recorder_refuses_a_start_whose_nodes_and_gpu_counts_differ() -> None:
    h = RunHeader("budgets", "c", 1, 3600.0, 8, {"n1": 8}, {"lm": 8.0}, {}, 3600.0, 8, teams=("lm",))
    rec = Recorder(h)
    rec.consume(Event(0.0, "submit", "j1", "lm", 8, min_runtime=0.0))
    with pytest.raises(ValueError, match="1 nodes but 2 GPU counts"):
        rec.consume(Event(1.0, "start", "j1", "lm", 8, nodes=("n1",), node_gpus=(4, 4), allocated=True))
