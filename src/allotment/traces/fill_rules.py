"""The documented, configurable rule for fields a source trace does not record.

No public trace says how long a job must run before it may be preempted, whether it can resume,
how often it checkpoints or what kind of job it is; a canonical trace needs all four.  Guessing
silently would make every simulated result depend on a hidden choice, so the choice is a value:

* ``defaults`` give each field a value: ``min_runtime`` is a duration, ``0`` (unallocated),
  ``policy`` (leave it undeclared: the policy's ``default_min_runtime`` applies at replay) or
  ``work`` (protected for its whole run, the old non-preemptible world); ``checkpoint_interval``
  is a duration or ``none`` (continuous); ``kind`` is a job kind or ``auto``.
* ``rules`` are tried in order; the first rule whose ``match`` fits a job sets the fields it
  names.  ``match`` keys: ``account``, ``user``, ``class`` (the source's queue / QoS), ``kind``,
  ``min_gpus``, ``max_gpus``, ``min_work``, ``max_work``.
* ``auto`` kind: ``debug`` when work <= ``debug_max_work`` and gpus <= ``debug_max_gpus``,
  ``train`` when gpus >= ``train_min_gpus``, else ``batch``.

A value the source does record always wins over the rules.  Each importer starts from its own
built-in rules (``IMPORTER_RULES``), e.g. Alibaba's best-effort QoS becomes unallocated work;
``--fill-rules FILE`` replaces them and ``--fill KEY=VALUE`` then changes single defaults.
See docs/trace-format.md for the YAML form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from allotment.config.pydantic_errors import validation_diagnostics
from allotment.config.yamlsafe import parse_yaml
from allotment.core.jobs import JOB_KINDS
from allotment.durations import parse_duration
from allotment.errors import ConfigError, Diagnostic, UsageError
from allotment.traces.bounds import duration_problem
from allotment.traces.importers.base import RawJob

MinRuntime = float | Literal["policy", "work"]
Checkpoint = float | Literal["none"]


@dataclass(frozen=True, slots=True)
class Fill:
    """Field values a rule sets; ``None`` means "this rule does not set it"."""

    min_runtime: MinRuntime | None = None
    resumable: bool | None = None
    checkpoint_interval: Checkpoint | None = None
    kind: str | None = None  # a job kind or "auto"


@dataclass(frozen=True, slots=True)
class Match:
    account: str | None = None
    user: str | None = None
    klass: str | None = None
    kind: str | None = None
    min_gpus: int | None = None
    max_gpus: int | None = None
    min_work: float | None = None
    max_work: float | None = None

    def fits(self, job: RawJob, kind: str | None, account: str, user: str) -> bool:
        return (
            (self.account is None or self.account == account)
            and (self.user is None or self.user == user)
            and (self.klass is None or self.klass == job.klass)
            and (self.kind is None or self.kind == kind)
            and (self.min_gpus is None or job.gpus >= self.min_gpus)
            and (self.max_gpus is None or job.gpus <= self.max_gpus)
            and (self.min_work is None or job.work >= self.min_work)
            and (self.max_work is None or job.work <= self.max_work)
        )


@dataclass(frozen=True, slots=True)
class FilledFields:
    min_runtime: float | None
    resumable: bool
    checkpoint_interval: float | None
    kind: str


@dataclass(frozen=True, slots=True)
class FillRules:
    defaults: Fill = Fill(
        min_runtime="policy", resumable=True, checkpoint_interval=1800.0, kind="auto"
    )
    rules: tuple[tuple[Match, Fill], ...] = ()
    debug_max_work: float = 900.0
    debug_max_gpus: int = 8
    train_min_gpus: int = 16

    def auto_kind(self, job: RawJob) -> str:
        if job.work <= self.debug_max_work and job.gpus <= self.debug_max_gpus:
            return "debug"
        if job.gpus >= self.train_min_gpus:
            return "train"
        return "batch"

    def _pick(self, job: RawJob, kind: str | None, field: str, names: tuple[str, str]) -> object:
        for match, fill in self.rules:
            value = getattr(fill, field)
            if value is not None and match.fits(job, kind, *names):
                return value
        return getattr(self.defaults, field)

    def apply(
        self, job: RawJob, *, account: str | None = None, user: str | None = None
    ) -> FilledFields:
        """Fill what ``job`` leaves unknown (see the module doc for the order).

        ``account`` and ``user`` are the names the trace will carry (rules match those); by
        default the job's own."""
        names = (job.account if account is None else account, job.user if user is None else user)
        kind = job.kind
        if kind is None:
            chosen = self._pick(job, None, "kind", names)
            kind = self.auto_kind(job) if chosen in (None, "auto") else str(chosen)
        if job.min_runtime is not None:
            min_rt: float | None = job.min_runtime
        else:
            mr = self._pick(job, kind, "min_runtime", names)
            min_rt = None if mr in (None, "policy") else job.work if mr == "work" else float(mr)  # type: ignore[arg-type]
        resumable = job.resumable
        if resumable is None:
            resumable = bool(self._pick(job, kind, "resumable", names))
        ckpt = job.checkpoint_interval
        if ckpt is None:
            ck = self._pick(job, kind, "checkpoint_interval", names)
            ckpt = None if ck in (None, "none") else float(ck)  # type: ignore[arg-type]
        return FilledFields(min_rt, resumable, ckpt, kind)

    def with_overrides(self, pairs: Sequence[str]) -> FillRules:
        """Apply ``--fill KEY=VALUE`` pairs to the defaults (one-line usage errors)."""
        changes: dict[str, object] = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            key = key.strip()
            if not sep:
                raise UsageError(f"--fill expects KEY=VALUE, got {pair!r}")
            if key not in _FIELD_PARSERS:
                raise UsageError(
                    f"--fill: unknown field {key!r}; known: {', '.join(_FIELD_PARSERS)}"
                )
            try:
                changes[key] = _FIELD_PARSERS[key](value.strip())
            except ValueError as exc:
                raise UsageError(f"--fill {key}: {exc}") from None
        return replace(self, defaults=replace(self.defaults, **changes))  # type: ignore[arg-type]


def _min_runtime(text: str | int | float) -> MinRuntime:
    if text in ("policy", "work"):
        return text  # type: ignore[return-value]
    return _bounded("min_runtime", float(parse_duration(text)))


def _checkpoint(text: str | int | float) -> Checkpoint:
    if text == "none":
        return "none"
    v = float(parse_duration(text))
    if v <= 0:
        raise ValueError("a checkpoint interval must be positive (or none)")
    return _bounded("checkpoint_interval", v)


def _bounded(key: str, v: float) -> float:
    """A filled value lands in the trace, so it must pass the reader's bounds too."""
    problem = duration_problem(key, v)
    if problem is not None:
        raise ValueError(problem)
    return v


def _bool(text: str | bool) -> bool:
    if isinstance(text, bool):
        return text
    if text.lower() in ("true", "yes", "1"):
        return True
    if text.lower() in ("false", "no", "0"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def _kind(text: str) -> str:
    if text != "auto" and text not in JOB_KINDS:
        raise ValueError(f"expected auto or one of {', '.join(JOB_KINDS)}, got {text!r}")
    return text


_FIELD_PARSERS = {
    "min_runtime": _min_runtime,
    "resumable": _bool,
    "checkpoint_interval": _checkpoint,
    "kind": _kind,
}


# ------------------------------------------------------------------ the YAML rules file


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class _FillModel(_Strict):
    min_runtime: str | int | None = None
    resumable: bool | None = None
    checkpoint_interval: str | int | None = None
    kind: str | None = None


class _MatchModel(_Strict):
    account: str | None = None
    user: str | None = None
    class_: str | None = Field(default=None, alias="class")
    kind: str | None = None
    min_gpus: int | None = Field(default=None, ge=0)
    max_gpus: int | None = Field(default=None, ge=0)
    min_work: str | int | None = None
    max_work: str | int | None = None


class _RuleModel(_FillModel):
    match: _MatchModel = Field(default_factory=_MatchModel)


class _AutoKindModel(_Strict):
    debug_max_work: str | int | None = None
    debug_max_gpus: int | None = Field(default=None, ge=0)
    train_min_gpus: int | None = Field(default=None, ge=1)


class FillRulesFile(_Strict):
    defaults: _FillModel = Field(default_factory=_FillModel)
    auto_kind: _AutoKindModel = Field(default_factory=_AutoKindModel)
    rules: list[_RuleModel] = Field(default_factory=list)


def _fill_from(
    m: _FillModel, where: tuple[str | int, ...], errs: list[tuple[tuple[str | int, ...], str]]
) -> Fill:
    out: dict[str, object] = {}
    for key, parse in _FIELD_PARSERS.items():
        value = getattr(m, key)
        if value is None:
            continue
        try:
            out[key] = parse(value)
        except ValueError as exc:
            errs.append(((*where, key), str(exc)))
    return Fill(**out)  # type: ignore[arg-type]


def _dur(
    value: str | int | None,
    where: tuple[str | int, ...],
    errs: list[tuple[tuple[str | int, ...], str]],
) -> float | None:
    if value is None:
        return None
    try:
        return float(parse_duration(value))
    except ValueError as exc:
        errs.append((where, str(exc)))
        return None


def load_fill_rules(path: str | Path, base: FillRules | None = None) -> FillRules:
    """Read a rules file; unset defaults keep ``base``'s values.  Errors carry file:line:col."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read fill rules {path}: {exc.strerror or exc}") from None
    value, smap, diags = parse_yaml(str(path), data)
    if diags:
        raise ConfigError(diags)
    try:
        model = FillRulesFile.model_validate(value)
    except ValidationError as exc:
        raise ConfigError(validation_diagnostics(FillRulesFile, exc, smap)) from None
    errs: list[tuple[tuple[str | int, ...], str]] = []
    start = base or FillRules()
    d = _fill_from(model.defaults, ("defaults",), errs)
    defaults = Fill(
        min_runtime=d.min_runtime if d.min_runtime is not None else start.defaults.min_runtime,
        resumable=d.resumable if d.resumable is not None else start.defaults.resumable,
        checkpoint_interval=d.checkpoint_interval
        if d.checkpoint_interval is not None
        else start.defaults.checkpoint_interval,
        kind=d.kind if d.kind is not None else start.defaults.kind,
    )
    rules: list[tuple[Match, Fill]] = []
    for i, r in enumerate(model.rules):
        mm = r.match
        if mm.kind is not None and mm.kind not in JOB_KINDS:
            errs.append((("rules", i, "match", "kind"), f"unknown kind {mm.kind!r}"))
        match = Match(
            account=mm.account,
            user=mm.user,
            klass=mm.class_,
            kind=mm.kind,
            min_gpus=mm.min_gpus,
            max_gpus=mm.max_gpus,
            min_work=_dur(mm.min_work, ("rules", i, "match", "min_work"), errs),
            max_work=_dur(mm.max_work, ("rules", i, "match", "max_work"), errs),
        )
        rules.append((match, _fill_from(r, ("rules", i), errs)))
    ak = model.auto_kind
    dmw = _dur(ak.debug_max_work, ("auto_kind", "debug_max_work"), errs)
    if errs:
        raise ConfigError(Diagnostic(smap.file, *smap.value(loc), msg) for loc, msg in errs)
    return FillRules(
        defaults=defaults,
        rules=tuple(rules),
        debug_max_work=dmw if dmw is not None else start.debug_max_work,
        debug_max_gpus=ak.debug_max_gpus if ak.debug_max_gpus is not None else start.debug_max_gpus,
        train_min_gpus=ak.train_min_gpus if ak.train_min_gpus is not None else start.train_min_gpus,
    )


def rules_for(importer: str, table: Mapping[str, FillRules] | None = None) -> FillRules:
    return (table or IMPORTER_RULES).get(importer, FillRules())


#: Built-in rules per importer (documented in docs/trace-format.md, "Filling unknown fields").
IMPORTER_RULES: dict[str, FillRules] = {
    # Alibaba QoS: best effort is work nobody budgeted, so unallocated; Guaranteed pods are
    # never preempted in the source cluster, so protected for their whole run.
    "alibaba-gpu": FillRules(
        rules=(
            (Match(klass="BE"), Fill(min_runtime=0.0)),
            (Match(klass="Guaranteed"), Fill(min_runtime="work", resumable=False)),
            (Match(klass="LS"), Fill(kind="inference")),
        )
    ),
}
