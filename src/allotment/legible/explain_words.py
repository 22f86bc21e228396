"""The words of ``allot explain``: one sentence a researcher reads first, then the detail
(allocation path, within-team score with each factor, what the job waits for, its history)."""

from __future__ import annotations

from allotment.legible.explain import Facts
from allotment.legible.rundir import RunDir
from allotment.legible.tree import TreeRow
from allotment.legible.words import clock, duration, gpu_hours, ordinal, percent


def _window(window_s: float) -> str:
    return "this week" if window_s == 7 * 86400 else f"over the last {duration(window_s)}"


def _team_phrase(f: Facts) -> str:
    if not f.path:
        return f"account {f.spec.account} is not in this cluster's tree"
    # the first level up the path where there is a choice to be made (an only child has no rank)
    row = next((r for r in reversed(f.path) if r.siblings > 1), f.path[-1])
    parent = row.parent or "the root"
    who = row.name if row is f.path[-1] else f"{f.path[-1].name}'s group {row.name}"
    used = f"used {percent(row.ratio)} of its share {_window(f.window_s)}"
    return f"{who} is {ordinal(row.rank)} of {row.siblings} among {parent}'s children ({used})"


def _shape(f: Facts) -> str:
    g, per = f.spec.gpus, f.spec.gpus_per_node or f.gpus_per_node
    if g > per or (f.spec.gpus_per_node and f.spec.gpus_per_node < g):
        n = -(-g // per)
        return f"{g} GPUs on {n} whole nodes"
    return f"{g} GPUs on one node"


def _waiting(f: Facts, run: RunDir) -> str:
    team = ""
    if f.team is not None:
        team = f"{ordinal(f.team.position)} of {f.team.of} in team {f.spec.account}; "
    wait = f"waiting for {_shape(f)}"
    if f.reservation is not None and f.reservation.at is not None:
        n = len(f.reservation.nodes)
        wait += (f": {n} node{'s' if n != 1 else ''} reserved, expected start in ~"
                 f"{duration(f.reservation.at - f.t)}")
    elif f.min_runtime_s <= 0:
        wait += ": as unallocated work it only gets GPUs that allocated work leaves idle"
    else:
        wait += ": no reservation yet (a job ahead of it, or free GPUs of the right shape, come first)"
    if f.preempted is not None:  # the news first: why it is not running any more
        return f"{_preempted(f, run)}; now {team}{_team_phrase(f)}; {wait}"
    return f"{team}{_team_phrase(f)}; {wait}"


def _preempted(f: Facts, run: RunDir) -> str:
    p = f.preempted
    assert p is not None
    by = ""
    if p.by:
        other = run.jobs.get(p.by)
        by = f" by job {p.by}" + (f" of {other.account}" if other else "")
    if f.min_runtime_s <= 0:
        contract = "this job ran unallocated: free, preemptible at once"
    elif f.preempted_run_s >= f.min_runtime_s:
        contract = f"this job was past its {duration(f.min_runtime_s)} minimum runtime"
    else:
        contract = f"it had run {duration(f.preempted_run_s)} of its {duration(f.min_runtime_s)} minimum runtime"
    # the rule's reason is a fact of that moment (GPUs running over an entitlement), unlike the
    # share used this week in the same sentence: say which
    moment = "now" if p.t == f.t else "at the time"
    return f"preempted at {clock(run.t0, p.t)}{by} ({p.rule}, {moment}: {p.reason}; {contract})"


def summary(f: Facts, run: RunDir) -> str:
    if f.state == "waiting":
        return _waiting(f, run)
    if f.state == "running" and f.run_start is not None:
        where = ", ".join(f.run_nodes[:4]) + (f" and {len(f.run_nodes) - 4} more" if len(f.run_nodes) > 4 else "")
        if f.allocated:
            until = f.run_start + f.min_runtime_s
            prot = (f"protected until {clock(run.t0, until)} ({duration(f.min_runtime_s)} minimum runtime)"
                    if until > f.t else f"past its {duration(f.min_runtime_s)} minimum runtime, may be preempted")
            charged = f"charged to {f.spec.account}; {prot}"
        else:
            charged = "unallocated: free, never charged, preemptible at once"
        return f"running since {clock(run.t0, f.run_start)} on {where} ({f.spec.gpus} GPUs, {charged}); {_team_phrase(f)}"
    if f.state == "finished":
        end = next(e for e in reversed(f.history) if e.event == "end")
        n_pre = sum(1 for e in f.history if e.event == "preempt" and e.t <= f.t)
        again = f", preempted {n_pre} time{'s' if n_pre != 1 else ''}" if n_pre else ""
        return (f"finished at {clock(run.t0, end.t)}, {duration(end.t - f.spec.submit)} after submission{again}; "
                f"charged {gpu_hours(end.charged_gpu_hours)} to {f.spec.account}")
    if f.state == "rejected":
        return f"rejected at submission: {f.history[-1].reason or 'it can never fit this cluster'}"
    return f"not submitted yet at {clock(run.t0, f.t)} (submits at {clock(run.t0, f.spec.submit)})"


def _path_line(r: TreeRow) -> str:
    return (f"  {'  ' * r.depth}{r.name:<22} {ordinal(r.rank):>4} of {r.siblings:<2}  "
            f"used {gpu_hours(r.usage_gpu_hours):>11} of {gpu_hours(r.owed_gpu_hours):>11} owed "
            f"({percent(r.ratio):>4})  entitlement {r.entitlement_gpus:.1f} GPUs")


def render_text(f: Facts, run: RunDir) -> str:
    s = f.spec
    lines = [f"job {s.id} ({s.kind}, {s.gpus} GPUs, user {s.user or '-'}) at {clock(run.t0, f.t)}: {f.state}",
             f"  {summary(f, run)}", "", "allocation path (rank among siblings, window usage vs owed):"]
    lines += [_path_line(r) for r in f.path]
    if f.team is not None:
        sc = f.team.score
        lines += ["", f"within team {s.account}: {ordinal(f.team.position)} of {f.team.of}, score {sc.total:.3f} = "
                  f"declared {sc.declared:.3f} + deadline {sc.deadline:.3f} + age {sc.age:.3f} + "
                  f"fairness {sc.fairness:.3f} + fit {sc.fit:.3f} + boost {sc.boost:.3f} (each already weighted)"]
        if sc.terms:
            how = "weighted mean of" if sc.mode == "adaptive" else "sum of"
            lines.append(f"  {sc.mode} derivation, {how} factor x weight: "
                         + ", ".join(f"{t.name} {t.factor:.3f} x {t.weight:.3f}" for t in sc.terms)
                         + (f"; inherited from its dependants {sc.inherited:.3f}" if sc.inherited else ""))
            read = ("the two weight sets blended" if sc.mode == "adaptive" else "fit's weight scaled 1x-3x")
            lines.append(f"  weights read at load {sc.load:.2f} (demanded / installed GPUs): {read}")
    for b in f.boosts:
        state = "counts" if b.active else "expired: no effect"
        lines.append(f"  boost {b.target} +{b.amount:g} until {clock(run.t0, b.expires_t)}, approved by {b.approver} "
                     f"({b.reason}): {state}")
    mr = "unallocated (0: free, preemptible at once)" if f.min_runtime_s <= 0 else duration(f.min_runtime_s)
    lines += ["", f"minimum runtime: {mr}"]
    if f.reservation is not None:
        r = f.reservation
        lines.append(f"reservation: {', '.join(r.nodes)} expected free at {clock(run.t0, r.at or f.t)}")
    lines += ["", "history:"]
    for e in f.history:
        if e.t > f.t:
            break
        extra = " ".join(x for x in (
            ",".join(e.nodes[:4]) + ("..." if len(e.nodes) > 4 else ""),
            f"by {e.by}" if e.by else "", f"[{e.rule}]" if e.rule else "", e.reason) if x)
        lines.append(f"  {clock(run.t0, e.t)}  {e.event:<8} {extra}".rstrip())
    return "\n".join(lines) + "\n"
