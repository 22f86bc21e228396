"""The interactive class keeps a frozen record's contract, compiled or not (compile.interactive).

It is compiled (``_compiled.HOT``: its one recognition rule is asked per pending job and per
victim's grace), and a compiled frozen dataclass does not unpickle by the default protocol (it
sets each field on an empty instance, which the frozen ``__setattr__`` refuses): it rebuilds
itself through its constructor (``__reduce__``).  Plan's workers pickle the policy holding it.
Run with a compiled copy's ``src`` on ``PYTHONPATH`` to check the compiled form."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from allotment.compile.interactive import InteractiveClass

# every field away from its default, so a field the rebuild forgot shows
CLS = InteractiveClass(("session", "notebook"), ("interactive",), 4, 7200, 300, "restore-me", 2, ())
NAMED = InteractiveClass(pool_names=("n1", "n2"))


def test_every_field_of_the_sample_differs_from_its_default() -> None:
    default = InteractiveClass()
    for f in dataclasses.fields(CLS):
        if f.name != "pool_names":
            assert getattr(CLS, f.name) != getattr(default, f.name), f.name
    assert NAMED.pool_names != default.pool_names


@pytest.mark.parametrize("cls", [CLS, NAMED])
@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_the_class_unpickles_equal_to_itself(cls: InteractiveClass, protocol: int) -> None:
    got = pickle.loads(pickle.dumps(cls, protocol))
    assert got == cls and hash(got) == hash(cls)


@pytest.mark.parametrize("cls", [CLS, NAMED])
def test_the_class_deep_copies_replaces_and_refuses_writes(cls: InteractiveClass) -> None:
    assert copy.deepcopy(cls) == cls
    got = dataclasses.replace(cls, grace_s=1)
    assert got.grace_s == 1 and _fields(got) == {**_fields(cls), "grace_s": 1}
    with pytest.raises(dataclasses.FrozenInstanceError):
        cls.grace_s = 1  # type: ignore[misc]


def _fields(cls: InteractiveClass) -> dict[str, object]:
    return {f.name: getattr(cls, f.name) for f in dataclasses.fields(cls)}
