"""``SettledJobs`` (issue 32, item 5): a chunk of slots leaves memory once every job in it has
gone, and reads back the same; a job still alive keeps only its own chunk."""

from __future__ import annotations

from allotment.sim.settled import CHUNK, DROPPED, LIVE, SettledJobs


def _settle(s: SettledJobs, serial: int) -> None:
    s.settle(serial, float(serial), float(serial) + 1.0, 0.5, None, serial % 7 + 1, 0, serial % 3, False)


def test_only_the_chunks_holding_a_live_job_stay_in_memory() -> None:
    s = SettledJobs()
    keep = 5  # one job that lives through the whole run
    for serial in range(10 * CHUNK + 3):
        assert s.open() == serial
        if serial != keep:
            _settle(s, serial)
    assert s.held() == 2  # the first chunk (its job is alive) and the last (still being filled)
    chunks = list(s.chunks())
    assert [base for base, _ in chunks] == [c * CHUNK for c in range(11)]
    _, third = chunks[3]
    i = 17
    serial = 3 * CHUNK + i
    assert (third.eligible[i], third.first_start[i], third.gpus[i], third.account[i], third.kind[i]) == (
        float(serial), float(serial) + 1.0, serial % 7 + 1, serial % 3, 0)
    assert chunks[0][1].kind[keep] == LIVE


def test_a_slot_replaced_by_a_later_submit_of_its_id_does_not_hold_its_chunk() -> None:
    s = SettledJobs()
    for serial in range(2 * CHUNK):
        s.open()
        if serial == 3:
            s.drop(serial)
        else:
            _settle(s, serial)
    s.open()
    assert s.held() == 1
    assert next(s.chunks())[1].kind[3] == DROPPED
