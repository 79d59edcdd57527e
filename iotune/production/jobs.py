"""Production jobs in a store: a job's choice recorded before it runs, its result after.

A production journal is an iotune store (:class:`iotune.store.Store`: appends under the
store's lock, one whole fsynced line each, torn lines skipped on read), kept apart from the
stores of dedicated runs so that ``tune`` and ``train`` never take a production job for a
dedicated measurement. Each job writes two records, both ``kind: production_job`` with its
``tag`` (the campaign: one application, scale and input) and ``job_id``:

- ``event: start``, before the application starts: the configuration chosen (``config``, its
  ``settings``), the ``role`` and ``reason`` from :func:`iotune.production.rule.choose`;
- ``event: finish``, after it: ``status`` (``ok`` or ``failed``) and ``io_seconds``, with
  ``io_source`` when they came from the preload library's report
  (:func:`io_seconds_from_report`).

The choice is made and recorded while holding the store's lock, so jobs starting at once,
on any node, see each other's choices. A job killed before ``finish`` leaves only its start
record: it counts as running until its time limit (``time_limit_s``, recorded at start; see
:mod:`iotune.production.time_limit`) has passed, then as lost, never as a time; a lost first
trial no longer holds its configuration back.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from iotune.errors import ConfigError, DataError, StoreError
from iotune.inputs import parse_json, read_text
from iotune.preload.report import file_io, has_opens
from iotune.production.rule import Assessment, Choice, Prior, Run, assess, choose
from iotune.production.time_limit import DEFAULT as DEFAULT_LIMIT
from iotune.production.time_limit import DEFAULT_TIME_LIMIT_H, TimeLimit, lost_after
from iotune.store import Store, now_iso
from iotune.store.lock import host_name
from iotune.tuned import (
    FILES_KEY,
    configuration,
    measured_alternatives,
    recorded_configuration,
    serial_configuration,
    trial_configurations,
)

KIND = "production_job"
#: Name of the configuration with no setting.
DEFAULT = "default"
#: The states of a job: finished with a time, finished as failed, started and not finished
#: within its time limit (running), started and not finished past it (lost).
STATES = ("ok", "failed", "running", "lost")
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_name(value: str, where: str) -> str:
    """``value`` when it is 1-128 letters, digits, ``.``, ``_``, ``-`` (not first)."""
    if not _SAFE.fullmatch(value):
        raise ConfigError(f"{where}: {value!r} is not 1-128 letters, digits, '.', '_' or '-' "
                          "starting with a letter or digit")
    return value


def job_id_from_env(env: Mapping[str, str]) -> str | None:
    """The Slurm job's id: ``<array job>_<task>`` for an array task, else ``SLURM_JOB_ID``;
    None outside Slurm."""
    array, task = env.get("SLURM_ARRAY_JOB_ID"), env.get("SLURM_ARRAY_TASK_ID")
    if array and task:
        return f"{array}_{task}"
    return env.get("SLURM_JOB_ID") or None


def config_name(config: Mapping[str, Any]) -> str:
    """``default`` for no settings, else ``c`` and 8 hex digits of the configuration's hash
    (:func:`iotune.tuned.configuration`). The hash covers the order of the per-file
    patterns (a file's settings are its first matching pattern's): with two patterns or
    more they are hashed as a list in order. With one pattern or none, the configuration
    is hashed as a plain mapping, as before the order was kept, so those names (every
    configuration without ``files:``) are unchanged."""
    if not config:
        return DEFAULT
    serial = serial_configuration(config)
    if len(serial.get(FILES_KEY) or ()) <= 1:
        serial = dict(config)
    text = json.dumps(serial, sort_keys=True, separators=(",", ":"), default=str)
    return "c" + hashlib.sha256(text.encode()).hexdigest()[:8]


@dataclass(frozen=True)
class Job:
    """One job of a campaign as the journal tells it: its configuration, role and state
    (:data:`STATES`), its I/O seconds (``ok`` only), when it started, its time limit (None:
    recorded before limits were, given the default) and where that came from, where its
    finish record stands among the journal's records (None: not finished), and the seconds
    from its start to when the journal was read."""

    job_id: str
    config: str
    role: str
    state: str
    seconds: float | None
    started: datetime
    time_limit_s: float | None
    time_limit_source: str
    finish_order: int | None = None
    age_s: float = 0.0

    @property
    def lost_after_s(self) -> float:
        """Seconds after its start at which, not finished, it counts as lost."""
        return lost_after(self.time_limit_s)


@dataclass(frozen=True)
class Campaign:
    """A tag's jobs as read from the journal, oldest first."""

    tag: str
    runs: list[Run]
    job_ids: list[str]
    settings: dict[str, dict[str, Any]]  # configuration name -> settings
    finished: set[str]
    candidates: list[str]  # the ranked candidates the latest job was started with
    #: The tune's estimates of candidates the latest job was started with (by name).
    priors: dict[str, Prior] = field(default_factory=dict)
    #: Every job, in start order (``runs`` are what the rule reads of them).
    jobs: list[Job] = field(default_factory=list)
    #: Where each candidate came from (name -> ``FILE (recommended|best found|runner-up)``),
    #: as the latest start that offered it recorded.
    sources: dict[str, str] = field(default_factory=dict)
    #: Configurations whose per-file patterns' order no record keeps (recorded by an
    #: older iotune, see :func:`iotune.tuned.recorded_configuration`).
    order_lost: set[str] = field(default_factory=set)

    def count(self, state: str) -> int:
        """How many jobs are in ``state`` (:data:`STATES`)."""
        return sum(1 for j in self.jobs if j.state == state)


def _job_state(start: Mapping[str, Any], end: Mapping[str, Any] | None,
               now: datetime) -> tuple[str, datetime, float]:
    """A job's state (:data:`STATES`), its start time and its age at ``now`` in seconds,
    from its start record and finish record (None: none yet)."""
    started = datetime.fromisoformat(str(start["recorded_at"]))
    age = (now - started).total_seconds()
    if end is not None:
        return ("ok" if end.get("status") == "ok" else "failed"), started, age
    return ("running" if age < lost_after(_limit_of(start)) else "lost"), started, age


def _limit_of(start: Mapping[str, Any]) -> float | None:
    """The time limit a start record gives (None: none, as before limits were recorded, or
    not a positive number)."""
    limit = start.get("time_limit_s")
    return float(limit) if isinstance(limit, int | float) and limit > 0 else None


def _starts_and_ends(store: Store, tag: str | None
                     ) -> tuple[dict[tuple[str, str], dict[str, Any]],
                                dict[tuple[str, str], tuple[int, dict[str, Any]]]]:
    """The first start record and the first finish record (with its place in the journal)
    of each (tag, job id) in ``store``, of campaign ``tag`` only unless None."""
    starts: dict[tuple[str, str], dict[str, Any]] = {}
    ends: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    if store.exists():
        for order, record in enumerate(store.iter_records()):
            if record.get("kind") != KIND or (tag is not None and record.get("tag") != tag):
                continue
            key = (str(record.get("tag")), str(record.get("job_id")))
            if record.get("event") == "start":
                starts.setdefault(key, record)
            else:
                ends.setdefault(key, (order, record))
    return starts, ends


def read_campaign(store: Store, tag: str, now: datetime | None = None) -> Campaign:
    """Every job of ``tag`` in ``store`` as :class:`Run` values (see the module's rules)
    and :class:`Job` records, their states as of ``now`` (default: the current time)."""
    now = now or datetime.now(UTC)
    starts, ends = _starts_and_ends(store, tag)
    runs, jobs, settings = [], [], {}
    candidates: list[str] = []
    priors: dict[str, Prior] = {}
    order_lost: set[str] = set()
    sources: dict[str, str] = {}
    for (_, job_id), start in starts.items():
        candidates = [str(c) for c in start.get("candidates") or []]
        priors = _priors_of(start.get("priors"))
        if isinstance(start.get("sources"), Mapping):
            sources.update({str(k): str(v) for k, v in start["sources"].items()})
        config = str(start.get("config"))
        settings[config], ordered = recorded_configuration(start.get("settings") or {})
        if not ordered:  # its name, too, was hashed without the order
            order_lost.add(config)
        order, end = ends.get((tag, job_id), (None, None))
        state, started, age = _job_state(start, end, now)
        seconds = float(end["io_seconds"]) if end is not None and state == "ok" else None
        jobs.append(Job(job_id, config, str(start.get("role")), state, seconds, started,
                        _limit_of(start), str(start.get("time_limit_source") or DEFAULT_LIMIT),
                        order, age))
        runs.append(Run(config, str(start.get("role")), seconds, pending=state == "running"))
    return Campaign(tag, runs, [j for _, j in starts], settings,
                    {j for _, j in ends}, candidates, priors, jobs, sources, order_lost)


def _priors_of(recorded: Any) -> dict[str, Prior]:
    """The ``priors`` of a start record (name -> ``{log_ratio, sd}``); entries that are
    not two finite numbers with ``sd > 0`` (a hand-edited journal) are left out."""
    out: dict[str, Prior] = {}
    if not isinstance(recorded, Mapping):
        return out
    for name, value in recorded.items():
        if not isinstance(value, Mapping):
            continue
        ratio, sd = value.get("log_ratio"), value.get("sd")
        if (isinstance(ratio, int | float) and isinstance(sd, int | float)
                and math.isfinite(ratio) and math.isfinite(sd) and sd > 0):
            out[str(name)] = Prior(float(ratio), float(sd))
    return out


def tuned_candidates(doc: Mapping[str, Any]) -> list[tuple[dict[str, Any], Prior | None]]:
    """The configurations a checked tuned document offers a campaign
    (:func:`iotune.tuned.trial_configurations`), each with the tune's estimate of it as a
    :class:`Prior`: the best found's ``best_found_speedup`` and its interval (None for the
    others, and when the file gives no interval)."""
    gain = doc.get("best_found_speedup")
    prior = None
    if isinstance(gain, Mapping):
        estimate, interval = gain.get("estimate"), gain.get("interval")
        if (isinstance(estimate, int | float) and isinstance(interval, Sequence)
                and len(interval) == 2 and all(isinstance(v, int | float) for v in interval)):
            prior = Prior.from_speedup(float(estimate), float(interval[0]), float(interval[1]))
    alternatives = measured_alternatives(doc)  # each checked once
    best = alternatives["best_found"]
    return [(config, prior if config == best else None)
            for config in trial_configurations(doc, alternatives)]


#: How a candidate's source names the configuration a tuned file offered, by its field.
OFFERED_AS = {"best_found": "best found", "runner_up": "runner-up"}


def offered_as(doc: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    """Which of a checked tuned document's configurations ``config`` is (one
    :func:`tuned_candidates` gave): ``recommended``, ``best found`` or ``runner-up``."""
    if config == configuration(doc):
        return "recommended"
    for key, alternative in measured_alternatives(doc).items():
        if alternative and dict(alternative) == dict(config):
            return OFFERED_AS.get(key, key.replace("_", " "))
    return "offered"


def candidate_names(candidates: Sequence[Mapping[str, Any]]) -> list[str]:
    """Names of the ranked candidates' settings (see :func:`config_name`)."""
    return [config_name(c) for c in candidates]


def start_job(store: Store, tag: str, job_id: str,
              candidates: Sequence[Mapping[str, Any]],
              priors: Sequence[Prior | None] | None = None,
              time_limit: TimeLimit | None = None,
              sources: Sequence[str] | None = None) -> tuple[Choice, dict[str, Any]]:
    """Choose the configuration of job ``job_id`` of ``tag`` among the default and the
    ``candidates`` (settings, ranked best first; ``priors``: a tune's estimate of each, or
    None; ``sources``: where each came from, e.g. ``tuned.yaml (best found)``) and record
    the choice with the job's ``time_limit`` (None: the default limit), all under the
    store's lock. Returns the choice and the chosen settings. ConfigError when the job id
    was already started in this campaign."""
    check_name(tag, "--tag")
    check_name(job_id, "--job-id")
    limit = time_limit or TimeLimit(DEFAULT_TIME_LIMIT_H * 3600, DEFAULT_LIMIT)
    names = candidate_names(candidates)
    known = {DEFAULT: {}, **{n: dict(c) for n, c in zip(names, candidates, strict=True)}}
    given = {n: p for n, p in zip(names, priors or [None] * len(names), strict=True)
             if p is not None}
    offered = dict(zip(names, sources, strict=True)) if sources is not None else {}
    with store.exclusive():
        campaign = read_campaign(store, tag)
        if job_id in campaign.job_ids:
            raise ConfigError(f"--job-id: {job_id} was already started in campaign {tag}; "
                              "each job starts once")
        known = {**campaign.settings, **known}
        choice = choose(campaign.runs, DEFAULT, names, given)
        settings = known[choice.config]
        store.append({"kind": KIND, "event": "start", "tag": tag, "job_id": job_id,
                      "config": choice.config, "settings": serial_configuration(settings),
                      "role": choice.role,
                      "reason": choice.reason, "provenance": "production", "host": host_name(),
                      "candidates": names, "started_at": now_iso(),
                      "time_limit_s": limit.seconds, "time_limit_source": limit.source,
                      **({"sources": offered} if offered else {}),
                      **({"priors": {n: {"log_ratio": round(p.log_ratio, 6),
                                         "sd": round(p.sd, 6)} for n, p in given.items()}}
                         if given else {})})
    return choice, settings


def check_seconds(seconds: float | None) -> float | None:
    """``seconds`` when a finite number > 0 (or None); ConfigError otherwise."""
    if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(f"--seconds: {seconds!r} is not a positive number of seconds")
    return seconds


def io_seconds_from_report(path: os.PathLike[str] | str, pattern: str | None = None
                           ) -> tuple[float, dict[str, Any]]:
    """The application's I/O seconds from the preload library's report at ``path``
    (``IOTUNE_PRELOAD_OUT``, version 2 or later): the open-to-close times (slowest rank) of
    every open of the files whose path matches the shell ``pattern`` (all files when None),
    added; and what was counted (``io_source`` of the finish record).

    DataError naming the file or the pattern when it is not such a report, predates
    per-file times, or no matching file has a positive time.
    """
    text = read_text(path, "preload report", DataError)
    report = parse_json(text, f"--preload-report: {path}", DataError)
    if not isinstance(report, dict) or report.get("preload") != "iotune":
        raise DataError(f"--preload-report: {path}: not a report of iotune's preload library")
    if not has_opens(report):
        raise DataError(f"--preload-report: {path}: version {report.get('version')!r} has no "
                        "per-file times (version 2 and later; rebuild the library with "
                        "'python -m iotune.preload')")
    files = file_io(report, pattern)
    if not files:
        everything = [f.path for f in file_io(report)]
        if pattern is None:
            raise DataError(f"--preload-report: {path}: the program opened no file through "
                            "MPI-IO")
        raise DataError(f"--files: {pattern!r} matches none of the report's "
                        f"{len(everything)} files" + (f" (e.g. {everything[0]!r})"
                                                      if everything else ""))
    seconds = sum(f.seconds for f in files)
    if not (math.isfinite(seconds) and seconds > 0):
        raise DataError(f"--preload-report: {path}: the matching files have no positive "
                        f"open-to-close time ({seconds!r} s)")
    return seconds, {"preload_report": str(path), "pattern": pattern, "files": len(files),
                     "opens": sum(f.opens for f in files),
                     "bytes_written": sum(f.bytes_written for f in files),
                     "bytes_read": sum(f.bytes_read for f in files)}


def finish_job(store: Store, tag: str, job_id: str, seconds: float | None,
               source: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Record the end of job ``job_id``: ``ok`` with its I/O ``seconds``, or ``failed`` when
    None; ``source`` says where the seconds came from (:func:`io_seconds_from_report`).
    ConfigError when the job was never started or has already finished."""
    check_name(tag, "--tag")
    check_name(job_id, "--job-id")
    check_seconds(seconds)
    with store.exclusive():
        campaign = read_campaign(store, tag)
        if job_id not in campaign.job_ids:
            raise ConfigError(f"--job-id: {job_id} was not started in campaign {tag} "
                              "('iotune job start' records it)")
        if job_id in campaign.finished:
            raise ConfigError(f"--job-id: {job_id} of campaign {tag} has already finished")
        return store.append({"kind": KIND, "event": "finish", "tag": tag, "job_id": job_id,
                             "status": "ok" if seconds is not None else "failed",
                             "io_seconds": seconds, "provenance": "production",
                             "host": host_name(), **({"io_source": dict(source)}
                                                     if source else {})})


def status(store: Store, tag: str, now: datetime | None = None
           ) -> tuple[Campaign, Assessment]:
    """The campaign of ``tag`` as of ``now`` (default: the current time) and what the rule
    makes of it (StoreError: no such jobs)."""
    check_name(tag, "--tag")
    campaign = read_campaign(store, tag, now)
    if not campaign.runs:
        raise StoreError(f"--tag: no production job of campaign {tag} in {store.path}")
    names = list(campaign.candidates)
    names += [r.config for r in campaign.runs if r.config not in names and r.config != DEFAULT]
    return campaign, assess(campaign.runs, DEFAULT, names, campaign.priors)


def regret_paid(campaign: Campaign) -> float:
    """The I/O seconds the exploring jobs (role ``challenger``) cost beyond the default's
    typical time: the sum, over exploring jobs that finished with a time, of
    ``max(0, t_job - t_default)``, where ``t_default`` is the median time of the default's
    runs finished before that job finished (for a job that finished before any default
    run, the first default run's). Each job's share is fixed when it is recorded and never
    negative, so the figure only grows as the campaign runs; failed and lost exploring
    jobs add nothing (they recorded no time) and are counted apart. docs/production.md
    states the same definition."""
    default_times: list[float] = []
    unpriced: list[float] = []
    paid = 0.0
    for job in sorted((j for j in campaign.jobs if j.state == "ok"),
                      key=lambda j: j.finish_order or 0):
        assert job.seconds is not None
        if job.config == DEFAULT:
            default_times.append(job.seconds)
        if job.role == "challenger":
            unpriced.append(job.seconds)
        if default_times and unpriced:
            typical = statistics.median(default_times)
            paid += sum(max(0.0, t - typical) for t in unpriced)
            unpriced = []
    return paid


def env_job_id() -> str | None:
    """:func:`job_id_from_env` of this process's environment."""
    return job_id_from_env(os.environ)


#: The ``backend`` and ``provenance`` of a production job's row in ``iotune results``.
PRODUCTION = "production"


def is_journal(store: Store) -> bool:
    """Whether ``store`` is a production journal (its first record is a production job's;
    ``iotune job`` keeps journals apart from the stores of dedicated runs)."""
    if not store.exists():
        return False
    first = next(iter(store.iter_records()), None)
    return first is not None and first.get("kind") == KIND


def job_rows(store: Store, now: datetime | None = None) -> list[dict[str, Any]]:
    """One row per job of every campaign in ``store``, in start order, labelled as a
    production job: ``recorded_at`` (its start), ``campaign``, ``job_id``, ``role``,
    ``config``, ``backend`` and ``provenance`` ``production``, ``source`` (``production
    jobs of campaign TAG``), ``status`` (:data:`STATES`: ``running`` and ``lost`` are
    starts with no finish, within and past the job's time limit), ``io_seconds``, and each
    setting."""
    now = now or datetime.now(UTC)
    starts, ends = _starts_and_ends(store, None)
    rows = []
    for (tag, job_id), start in starts.items():
        _, end = ends.get((tag, job_id), (None, None))
        state, _, _ = _job_state(start, end, now)
        rows.append({"recorded_at": start.get("recorded_at"), "campaign": tag,
                     "job_id": job_id, "role": start.get("role"),
                     "config": start.get("config"), "backend": PRODUCTION,
                     "provenance": PRODUCTION, "source": f"production jobs of campaign {tag}",
                     "status": state,
                     "io_seconds": end.get("io_seconds") if end is not None else None,
                     **dict(start.get("settings") or {})})
    return rows
