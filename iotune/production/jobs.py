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
record: it counts as running for :data:`PENDING_HOURS`, then as lost, never as a time.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from iotune.errors import ConfigError, DataError, StoreError
from iotune.inputs import parse_json, read_text
from iotune.preload.report import file_io, has_opens
from iotune.production.rule import Assessment, Choice, Prior, Run, assess, choose
from iotune.store import Store, now_iso
from iotune.store.lock import host_name
from iotune.tuned import (
    FILES_KEY,
    measured_alternatives,
    recorded_configuration,
    serial_configuration,
    trial_configurations,
)

KIND = "production_job"
#: Name of the configuration with no setting.
DEFAULT = "default"
#: A start record with no finish is a job still running for this long, then a lost job:
#: longer than a day's batch limit at most sites, short enough that a killed job does not
#: hold a first trial back for long.
PENDING_HOURS = 48.0
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
    #: Configurations whose per-file patterns' order no record keeps (recorded by an
    #: older iotune, see :func:`iotune.tuned.recorded_configuration`).
    order_lost: set[str] = field(default_factory=set)


def read_campaign(store: Store, tag: str, now: datetime | None = None) -> Campaign:
    """Every job of ``tag`` in ``store`` as :class:`Run` values (see the module's rules)."""
    now = now or datetime.now(UTC)
    starts: dict[str, dict[str, Any]] = {}
    ends: dict[str, dict[str, Any]] = {}
    if store.exists():
        for record in store.iter_records():
            if record.get("kind") != KIND or record.get("tag") != tag:
                continue
            target = starts if record.get("event") == "start" else ends
            target.setdefault(str(record.get("job_id")), record)
    runs, settings = [], {}
    candidates: list[str] = []
    priors: dict[str, Prior] = {}
    order_lost: set[str] = set()
    for job_id, start in starts.items():
        candidates = [str(c) for c in start.get("candidates") or []]
        priors = _priors_of(start.get("priors"))
        config = str(start.get("config"))
        settings[config], ordered = recorded_configuration(start.get("settings") or {})
        if not ordered:  # its name, too, was hashed without the order
            order_lost.add(config)
        end = ends.get(job_id)
        if end is None:
            age_h = (now - datetime.fromisoformat(str(start["recorded_at"]))).total_seconds()
            runs.append(Run(config, str(start.get("role")), None,
                            pending=age_h / 3600 < PENDING_HOURS))
            continue
        ok = end.get("status") == "ok"
        runs.append(Run(config, str(start.get("role")),
                        float(end["io_seconds"]) if ok else None))
    return Campaign(tag, runs, list(starts), settings, set(ends), candidates, priors,
                    order_lost)


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


def candidate_names(candidates: Sequence[Mapping[str, Any]]) -> list[str]:
    """Names of the ranked candidates' settings (see :func:`config_name`)."""
    return [config_name(c) for c in candidates]


def start_job(store: Store, tag: str, job_id: str,
              candidates: Sequence[Mapping[str, Any]],
              priors: Sequence[Prior | None] | None = None) -> tuple[Choice, dict[str, Any]]:
    """Choose the configuration of job ``job_id`` of ``tag`` among the default and the
    ``candidates`` (settings, ranked best first; ``priors``: a tune's estimate of each, or
    None) and record the choice, all under the store's lock. Returns the choice and the
    chosen settings. ConfigError when the job id was already started in this campaign."""
    check_name(tag, "--tag")
    check_name(job_id, "--job-id")
    names = candidate_names(candidates)
    known = {DEFAULT: {}, **{n: dict(c) for n, c in zip(names, candidates, strict=True)}}
    given = {n: p for n, p in zip(names, priors or [None] * len(names), strict=True)
             if p is not None}
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


def status(store: Store, tag: str) -> tuple[Campaign, Assessment]:
    """The campaign of ``tag`` and what the rule makes of it (StoreError: no such jobs)."""
    check_name(tag, "--tag")
    campaign = read_campaign(store, tag)
    if not campaign.runs:
        raise StoreError(f"--tag: no production job of campaign {tag} in {store.path}")
    names = list(campaign.candidates)
    names += [r.config for r in campaign.runs if r.config not in names and r.config != DEFAULT]
    return campaign, assess(campaign.runs, DEFAULT, names, campaign.priors)


def regret_paid(campaign: Campaign, state: Assessment) -> float:
    """Extra I/O seconds the exploring jobs (challengers) spent against the default's mean
    time (negative: exploring saved time)."""
    base = state.estimates[DEFAULT].seconds
    if base is None:
        return 0.0
    return sum(r.seconds - base for r in campaign.runs
               if r.role == "challenger" and r.seconds is not None)


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
    jobs of campaign TAG``), ``status`` (``ok``, ``failed``, ``running`` or ``lost``: a
    start with no finish, see :data:`PENDING_HOURS`), ``io_seconds``, and each setting."""
    now = now or datetime.now(UTC)
    starts: dict[tuple[str, str], dict[str, Any]] = {}
    ends: dict[tuple[str, str], dict[str, Any]] = {}
    for record in store.iter_records() if store.exists() else ():
        if record.get("kind") != KIND:
            continue
        key = (str(record.get("tag")), str(record.get("job_id")))
        (starts if record.get("event") == "start" else ends).setdefault(key, record)
    rows = []
    for (tag, job_id), start in starts.items():
        end = ends.get((tag, job_id))
        if end is None:
            age = now - datetime.fromisoformat(str(start["recorded_at"]))
            state = "running" if age.total_seconds() / 3600 < PENDING_HOURS else "lost"
        else:
            state = str(end.get("status"))
        rows.append({"recorded_at": start.get("recorded_at"), "campaign": tag,
                     "job_id": job_id, "role": start.get("role"),
                     "config": start.get("config"), "backend": PRODUCTION,
                     "provenance": PRODUCTION, "source": f"production jobs of campaign {tag}",
                     "status": state,
                     "io_seconds": end.get("io_seconds") if end is not None else None,
                     **dict(start.get("settings") or {})})
    return rows
