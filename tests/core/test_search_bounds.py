"""The hot path's bounds, rewritten for speed, against their plain definitions: the nodes a
victim search may free (``preemption.victims._freeable_hosts``), the victims it picks on them
(``_pick_nodes``: unallocated-first and the class cut, against every node's option sorted) and
the ``max_gpus`` cap checks (``Accounting.cap_excess``, ``fits_caps``), the cap search's victims
(``caps.find_cap_victims``), a hold's node filter over a host list (``reservation.admitted``) and
the nodes' free-at times after a stop (``NodeEnds.stopped``)."""

from __future__ import annotations

import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from allotment.core.decide import build_scheduler
from allotment.core.jobs import JobSpec
from allotment.core.preemption import within_team
from allotment.core.preemption.caps import find_cap_victims, placeable
from allotment.core.preemption.terms import Donor
from allotment.core.preemption.victims import _Classifier, _freeable_hosts, _pick_nodes
from allotment.core.preemption.view import VictimView, lost_work
from allotment.core.reservation import Unreserved, admitted
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState, RunningJob, Snapshot
from allotment.core.state import Pend
from tests.core.builders import make_config

N_NODES = 6
ACCOUNTS = ("a", "b", "c")
CTX = build_context(make_config({"a": 1, "b": 1, "c": 1}, nodes=N_NODES, max_gpus={"a": 12, "org": 40}), "c1")
NODES = tuple(NodeState(f"n{i}", 8, healthy=i != 5) for i in range(N_NODES))

# a running job: (account, GPUs on one node, node, allocated, protection ended)
jobs = st.lists(st.tuples(st.sampled_from(ACCOUNTS), st.integers(1, 4), st.integers(0, N_NODES - 2), st.booleans(),
                          st.booleans()), max_size=14)


def _scheduler(running: list[tuple[str, int, int, bool, bool]], *, varied: bool = False) -> Scheduler:
    """A scheduler running ``running`` (jobs that would overfill a node left out), at t = 1000.
    ``varied``: with the lost work and flags a victim's key reads varied -- every other job
    non-resumable (it loses all it ran) but every fourth resumable from 5-minute checkpoints,
    start times apart, declared -1, 0 or 1."""
    used = [0] * N_NODES
    out = []
    for k, (account, gpus, node, allocated, ended) in enumerate(running):
        if used[node] + gpus > 8:
            continue
        used[node] += gpus
        more = {} if not varied else {"resumable": k % 2 == 0 or k % 4 == 3, "priority": k % 3 - 1,
                                      "checkpoint_interval": 300.0 if k % 4 == 3 else None}
        spec = JobSpec(id=f"j{k:02d}", submit=0.0, account=account, gpus=gpus, work=36000.0,
                       min_runtime=600.0 if allocated else 0.0, user="u", **more)  # type: ignore[arg-type]
        out.append(RunningJob(spec, 10.0 * (k % 4) if varied else 0.0, ((f"n{node}", gpus),), allocated,
                              100.0 if ended or not allocated else 9e9))
    sched = build_scheduler(Snapshot(NODES, tuple(out)), CTX, 0.0, frozenset())
    sched.state.expire_protections(1000.0)
    return sched


@settings(max_examples=200, deadline=None)
@given(jobs, st.integers(1, 8), st.sets(st.sampled_from(ACCOUNTS)), st.booleans())
def test_freeable_hosts_are_the_nodes_where_free_plus_the_owners_preemptible_gpus_reach_per(
    running: list[tuple[str, int, int, bool, bool]], per: int, accounts: set[str], with_more: bool
) -> None:
    sched = _scheduler(running)
    view = VictimView(sched.state.pool, sched.state.running, sched.state.acct, False, 0.1, True, 0.0)
    owners = {"", *accounts}
    more = {0: 3, 2: 1} if with_more else {}
    p = Pend(JobSpec(id="p", submit=0.0, account="a", gpus=per, work=1.0, user="u"), 0.0, 0.0, 0.0, 0, None, "a")
    got = _freeable_hosts(view, p, per, owners, more)
    ok = sched.state.pool.host_flags(per, None)
    owned = sched.state.acct.owner_nodes
    want = [i for i in range(N_NODES) if ok[i] and sched.state.pool.free[i]
            + sum(owned.get(o, {}).get(i, 0) for o in owners) + more.get(i, 0) >= per]
    assert got == want


@settings(max_examples=100, deadline=None)
@given(jobs, st.integers(0, 3))
def test_the_preemptible_gpus_per_node_are_those_of_the_preemptible_jobs_there_as_jobs_start_and_stop(
    running: list[tuple[str, int, int, bool, bool]], every: int
) -> None:
    sched = _scheduler(running)

    def check() -> None:
        pre = sched.state.acct.preemptible
        want = [sum(g for j, g in sched.state.pool.jobs[i].items() if j in pre) for i in range(N_NODES)]
        assert sched.state.acct.pre_on_node == want

    check()
    for k, jid in enumerate(sorted(sched.state.running)):
        if every and k % every == 0:
            sched.state.finish(jid)
            check()
    sched.state.expire_protections(1e10)  # the rest turn preemptible
    check()


@settings(max_examples=200, deadline=None)
@given(jobs, st.sampled_from((*ACCOUNTS, "zz")), st.integers(0, 40))  # zz: an account the tree does not fund
def test_cap_checks_are_the_largest_excess_over_the_caps_on_the_path(
    running: list[tuple[str, int, int, bool, bool]], account: str, gpus: int
) -> None:
    sched = _scheduler(running)
    acct, ctx = sched.state.acct, sched.ctx
    caps = [(n, c) for n in ctx.paths.get(account, ()) if (c := ctx.tree[n].max_gpus) is not None]
    want = max((acct.tree_gpus(n) + gpus - cap for n, cap in caps), default=0)
    assert acct.cap_excess(account, gpus) == want
    assert acct.fits_caps(account, gpus) == (want <= 0)


def _plain_pick_nodes(v: VictimView, n: int, per: int, cands: _Classifier, hosts: list[int]) -> list[str]:
    """``_pick_nodes`` by its definition: every node's cheapest way to make room (its takeable
    jobs in key order until ``per`` is free), all of them sorted, the first ``n`` taken."""
    options = []
    for i in hosts:
        free = v.pool.free[i]
        keys = sorted(c.key for j in v.pool.jobs[i] if (c := cands.get(j)) is not None)
        chosen: list[str] = []
        worst, cost = -1, 0.0
        for key in keys:
            if free >= per:
                break
            chosen.append(key[3])
            free += v.pool.jobs[i][key[3]]
            worst, cost = max(worst, key[0]), cost + key[2]
        if free >= per:
            options.append(((worst, cost, i), chosen))
    if len(options) < n:
        return []
    options.sort()
    out: list[str] = []
    for _, vs in options[:n]:
        out.extend(j for j in vs if j not in out)
    return out


@settings(max_examples=400, deadline=None)
@given(jobs, st.integers(1, 8), st.integers(1, 3), st.integers(-1, 1), st.sets(st.sampled_from(("b", "c"))),
       st.booleans(), st.booleans())
# node 0 passes the unallocated-first bound only with non-resumable free work that ``keep`` spares,
# so its option needs a reclaim; node 1's reclaim loses less work and must win
@example([("b", 4, 1, True, True), ("a", 4, 0, False, True), ("c", 4, 1, True, False), ("b", 4, 0, True, True)],
         4, 1, 0, {"b"}, True, True)
def test_picked_victims_are_the_cheapest_nodes_options_in_order(
    running: list[tuple[str, int, int, bool, bool]], per: int, n: int, declared: int, donors: set[str], keep: bool,
    busy_only: bool,
) -> None:
    sched = _scheduler(running, varied=True)
    view = VictimView(sched.state.pool, sched.state.running, sched.state.acct, keep, 0.1, True, 1000.0)
    p = Pend(JobSpec(id="p", submit=0.0, account="a", gpus=per * n, work=1.0, user="u", priority=declared),
             0.0, 0.0, 0.0, 0, None, "a")
    p.declared = declared
    # as a search calls it: mostly nodes without room (with n of them free it returns early)
    hosts = [i for i in range(N_NODES - 1) if not busy_only or sched.state.pool.free[i] < per]

    def classifier() -> _Classifier:
        return _Classifier(view, p, True, {d: Donor(2.0, 5.0) for d in donors}, 1.0, False, None)

    assert _pick_nodes(view, p, n, per, classifier(), hosts) == _plain_pick_nodes(view, n, per, classifier(), hosts)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=1, max_size=8), st.lists(st.integers(0, 20), max_size=10),
       st.integers(0, 8), st.integers(0, 4), st.none() | st.frozensets(st.integers(0, 7)))
def test_placeable_is_whether_n_of_the_admitted_hosts_have_per_free(free: list[int], hosts: list[int], per: int,
                                                                     n: int, held: frozenset[int] | None) -> None:
    hosts = [i % len(free) for i in hosts]
    allow = None if held is None else Unreserved(held)
    want = sum(1 for i in hosts if free[i] >= per and (allow is None or allow(i))) >= n
    assert placeable(hosts, free, per, n, allow) == want


def _plain_cap_victims(v: VictimView, p: Pend, n: int, per: int, allow: Unreserved | None) -> list[str] | None:
    """``find_cap_victims`` by its definition, for a job that is not a debug job and no gang
    sparing: its own team's preemptible lower-priority jobs (``within_team``) least lost work first, taken
    until the caps have room and ``n`` admitted nodes have ``per`` free."""
    over = v.acct.cap_excess(p.account, p.gpus)
    own = sorted((lost_work(r, v.t) * r.gpus, r.jid) for r in v.running.values()
                 if r.allocated and r.account == p.account and r.jid in v.acct.preemptible
                 and within_team.may_take(p.declared, r)
                 and not (v.keep_nonresumable and not r.resumable))
    if not own or sum(v.running[j].gpus for _, j in own) < over:
        return None
    hosts = [i for i in v.pool.hosts(per, p.gpu_type) if allow is None or allow(i)]
    free = list(v.pool.free)
    chosen: list[str] = []
    freed = 0
    for _, jid in own:
        if freed >= over and sum(1 for i in hosts if free[i] >= per) >= n:
            break
        chosen.append(jid)
        freed += v.running[jid].gpus
        for i, g in v.running[jid].placement:
            free[i] += g
    if not chosen or freed < over or sum(1 for i in hosts if free[i] >= per) < n:
        return None
    return chosen


# mostly account "a"'s jobs, allocated and past their protection: its cap (12) binds
capped_jobs = st.lists(st.tuples(st.sampled_from(("a", "a", "a", "b")), st.integers(1, 4), st.integers(0, N_NODES - 2),
                                 st.sampled_from((True, True, False)), st.sampled_from((True, True, False))),
                       min_size=2, max_size=14)


@settings(max_examples=400, deadline=None)
@given(capped_jobs, st.integers(1, 8), st.integers(1, 2), st.integers(-1, 2), st.booleans(),
       st.sampled_from((None, frozenset({1}), frozenset({0, 2, 3}))))
def test_cap_victims_are_the_teams_cheapest_lower_priority_jobs_until_the_caps_and_n_nodes_have_room(
    running: list[tuple[str, int, int, bool, bool]], per: int, n: int, declared: int, keep: bool,
    held: frozenset[int] | None,
) -> None:
    sched = _scheduler(running, varied=True)  # account "a" is capped at 12 GPUs
    view = VictimView(sched.state.pool, sched.state.running, sched.state.acct, keep, 0.1, True, 1000.0)
    p = Pend(JobSpec(id="p", submit=0.0, account="a", gpus=per * n, work=1.0, user="u", priority=declared),
             0.0, 0.0, 0.0, 0, None, "a")
    p.declared = declared
    allow = None if held is None else Unreserved(held)
    got = find_cap_victims(view, p, n, per, allow)
    assert (None if got is None else [v.job_id for v in got]) == _plain_cap_victims(view, p, n, per, allow)
    assert got is None or all(v.rule == within_team.RULE for v in got)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=10), st.frozensets(st.integers(0, 9)), st.booleans())
def test_admitted_hosts_are_those_the_filter_admits_in_order(hosts: list[int], held: frozenset[int],
                                                              as_function: bool) -> None:
    allow = Unreserved(held)
    got = admitted(hosts, (lambda i: allow(i)) if as_function else allow)
    assert got == [i for i in hosts if allow(i)]
    assert admitted(hosts, None) == hosts


@settings(max_examples=150, deadline=None)
@given(jobs, st.integers(1, 3))
def test_a_nodes_free_at_time_after_a_stop_is_the_latest_of_its_allocated_jobs(
    running: list[tuple[str, int, int, bool, bool]], every: int
) -> None:
    sched = _scheduler(running, varied=True)

    def check() -> None:
        for i in range(N_NODES):
            ends = [sched.state.running[j].frees_at() for j in sched.state.pool.jobs[i] if sched.state.running[j].allocated]
            assert sched.state.ends.end[i] == max(ends, default=-math.inf)

    for k, jid in enumerate(sorted(sched.state.running)):
        if k % every == 0:
            sched.state.finish(jid)
            check()
