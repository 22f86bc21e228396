"""The yield flag of a run (``reconcile.yield_flags``) is the flag of the start the backend
carried out, which is not always the tick's last decision for the job."""

from __future__ import annotations

from allotment.core.decisions import Start
from allotment.reconcile.yield_flags import kept_yields


def start(job: str, node: str, yields: bool) -> Start:
    return Start(job, ((node, 2),), True, "fits free GPUs", yields)


def test_a_start_that_found_its_job_running_keeps_the_earlier_decisions_flag() -> None:
    """Seed 11, 2026-12-07: f016 started yielding on n4; the next tick read it pending and
    decided it on n1, not yielding; Slurm had launched it on n4 (the update: ``unchanged``)."""
    again = start("16", "n1", yields=False)
    assert kept_yields({"16"}, set(), [again], {"16"}) == {"16"}
    # and the other way round: a run that did not yield stays so
    assert kept_yields(set(), set(), [start("16", "n1", yields=True)], {"16"}) == set()


def test_a_start_that_landed_takes_its_own_flag_whatever_the_job_had() -> None:
    assert kept_yields({"16"}, set(), [start("16", "n1", yields=False)], set()) == set()
    assert kept_yields(set(), set(), [start("16", "n4", yields=True)], set()) == {"16"}
    # a running job started again (off a draining node, say) takes the new start's flag
    assert kept_yields({"16"}, {"16"}, [start("16", "n2", yields=False)], set()) == set()


def test_a_flag_holds_while_its_job_runs_and_goes_when_it_stops_running() -> None:
    assert kept_yields({"7", "8"}, {"7"}, [], set()) == {"7"}  # 8 requeued or ended
    assert kept_yields({"7"}, {"7"}, [start("9", "n3", yields=True)], set()) == {"7", "9"}
