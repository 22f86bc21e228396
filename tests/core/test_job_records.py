"""The job records survive pickling and deep copies, compiled or not.

Plan's worker pool pickles the workloads it hands to its workers, and a switched run deep-copies
what it holds.  ``core.jobs`` is compiled (``_compiled.HOT``), and a compiled frozen dataclass
does not unpickle by the default protocol (it sets each field on an empty instance, which its
``__setattr__`` refuses): each record rebuilds itself through its constructor instead."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from allotment.core.jobs import JobSpec, NodeEvent

# every field away from its default, so a field the rebuild forgot shows
JOB = JobSpec(
    id="j1", submit=12.5, account="team-a", gpus=8, work=3600.0, user="u1", gpus_per_node=4,
    min_runtime=600.0, resumable=False, checkpoint_interval=900.0, priority=3, kind="train",
    deadline=86400.0, depends_on=("j0",), gpu_type="h100", partition="gpu", time_limit=7200.0,
)  # fmt: skip
EVENT = NodeEvent(time=30.0, node="n1", state="unhealthy")


def test_every_field_of_the_sample_job_differs_from_its_default() -> None:
    params = inspect.signature(JobSpec).parameters
    assert list(params) == [f.name for f in dataclasses.fields(JobSpec)]
    for name, p in params.items():
        assert getattr(JOB, name) != p.default, name


@pytest.mark.parametrize("record", [JOB, EVENT], ids=["JobSpec", "NodeEvent"])
@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_a_record_unpickles_equal_to_itself(record: object, protocol: int) -> None:
    back = pickle.loads(pickle.dumps(record, protocol=protocol))
    assert type(back) is type(record) and back == record


@pytest.mark.parametrize("record", [JOB, EVENT], ids=["JobSpec", "NodeEvent"])
def test_a_record_deep_copies_equal_to_itself(record: object) -> None:
    assert copy.deepcopy(record) == record and copy.copy(record) == record


def test_a_job_stays_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        JOB.gpus = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        del JOB.gpus


def test_a_job_is_hashed_and_compared_by_every_field() -> None:
    again = pickle.loads(pickle.dumps(JOB))
    assert hash(again) == hash(JOB) and len({JOB, again}) == 1
    assert dataclasses.replace(JOB, time_limit=1.0) != JOB
    assert dataclasses.replace(JOB, time_limit=1.0, gpus=2) == JobSpec(**{
        **{f.name: getattr(JOB, f.name) for f in dataclasses.fields(JOB)}, "time_limit": 1.0, "gpus": 2
    })
