"""``iotune probe``, ``states``, ``classify`` and ``placement``: file-system states.

Thin commands over :mod:`iotune.variability`; ``docs/variability.md`` explains the method.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from iotune.cli.common import config_option, format_option, resolve_config
from iotune.errors import ConfigError, DataError, StoreError
from iotune.output import emit, progress, render_pairs, render_table
from iotune.store import Store
from iotune.units import format_bytes, parse_duration, positive_bytes


def _duration(value: str, option: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ConfigError(f"{option}: {exc}") from None


def _store(config_path: Path | None, store_path: Path | None) -> Store:
    return Store(store_path if store_path is not None else resolve_config(config_path).store)


def _records(store: Store) -> list[dict[str, Any]]:
    if not store.exists():
        raise StoreError(f"store {store.path}: no such file")
    return store.records()


def _store_option(func: Any) -> Any:
    return click.option("--store", "store_path", type=click.Path(path_type=Path),
                        help="Store to use (default: the config's).")(func)


def _backend_option(func: Any) -> Any:
    return click.option("--backend", "backend",
                        help="Only records of this backend (probe, sim, mpi, ...); needed when "
                             "the store holds several.")(func)


@click.command("probe")
@config_option
@_store_option
@click.option("--interval", default="30s", show_default=True,
              help="Time between the starts of two probe rounds.")
@click.option("--duration", default="1h", show_default=True,
              help="How long to probe; 'none': until SIGTERM or SIGINT.")
@click.option("--size", "size_text", default="1MiB", show_default=True,
              help="Bytes per probe write (Lustre's bulk RPC is 1 MiB).")
@click.option("--rounds", type=click.IntRange(min=1), help="Stop after this many rounds.")
@click.option("--scratch", type=click.Path(file_okay=False, path_type=Path),
              help="Directory to probe under (default: the config's system.scratch).")
@click.option("--osts", help="Lustre: OST indices to probe, e.g. 0-7,12 (default: every OST "
                             "'lfs df' lists, else 0..system.ost_count-1).")
@click.option("--queue", type=click.Choice(["auto", "squeue", "none"]), default="auto",
              show_default=True, help="Job-queue features: auto = when squeue is on the PATH.")
@click.option("--queue-interval", default="5m", show_default=True,
              help="Time between two queue snapshots.")
@click.option("--simulate", "sim_system", metavar="SYSTEM",
              help="Write simulated rounds of a sim preset (e.g. hopper) instead of probing: "
                   "no I/O, records marked backend sim / provenance simulated.")
@click.option("--targets", type=click.IntRange(min=1), default=4, show_default=True,
              help="--simulate: number of simulated OSTs.")
@click.option("--noise", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="--simulate: noise level of the preset.")
@click.option("--seed", type=int, default=0, show_default=True, help="--simulate: seed.")
@format_option("table", ("table", "json", "yaml"))
def probe_command(config_path: Path | None, store_path: Path | None, interval: str,
                  duration: str, size_text: str, rounds: int | None, scratch: Path | None,
                  osts: str | None, queue: str, queue_interval: str, sim_system: str | None,
                  targets: int, noise: float, seed: int, fmt: str) -> None:
    """Time small synchronous writes to each storage target, periodically, into the store.

    On Lustre one file per OST (lfs setstripe -i OST -c 1) in a fresh directory under
    scratch; elsewhere one file there. Each round (all targets, plus job-queue features every
    --queue-interval) is one store record. SIGTERM or SIGINT stops it cleanly: the round in
    flight is recorded whole or dropped, probe files are removed, the exit status is 0.

    \b
    In a job script, beside the application:
      iotune probe --interval 30s --duration none &
      PROBE=$!
      srun ./my_app
      kill -TERM $PROBE; wait $PROBE
    """
    from iotune.variability.probe import ProbeSettings

    interval_s = _duration(interval, "--interval")
    duration_s = None if duration.strip().lower() == "none" else _duration(duration,
                                                                          "--duration")
    size = positive_bytes(size_text, "--size")
    settings = ProbeSettings(interval_s, duration_s, size, rounds, queue,
                             _duration(queue_interval, "--queue-interval"))
    config = resolve_config(config_path)
    store = Store(store_path if store_path is not None else config.store)
    if sim_system is not None:
        summary = _simulate_rounds(sim_system, store, settings, targets, noise, seed)
    else:
        summary = _probe(config, scratch, osts, store, settings)
    emit(summary, fmt, text=render_pairs(summary))


def _probe(config: Any, scratch: Path | None, osts: str | None, store: Store,
           settings: Any) -> dict[str, Any]:
    from iotune.fsinfo import filesystem_of, is_lustre
    from iotune.variability.probe import lustre_osts, parse_osts, run_probe

    directory = scratch if scratch is not None else config.system.scratch
    if not Path(directory).is_dir():
        raise ConfigError(f"system.scratch: {directory} is not a directory")
    fs_type, _ = filesystem_of(directory)
    chosen: list[int] | None = None
    if is_lustre(fs_type):
        chosen = parse_osts(osts) if osts else lustre_osts(directory, config.system.ost_count)
    elif osts:
        raise ConfigError(f"--osts: {directory} is on {fs_type}, not Lustre; OSTs cannot be "
                          "chosen there")
    summary = run_probe(directory, store, settings, osts=chosen, fs_type=fs_type,
                        system=config.system.name, progress=progress)
    progress(f"iotune: probe stopped ({summary.stopped_by}): {summary.recorded} round(s) "
             f"recorded, {summary.dropped} unfinished round(s) dropped; probe files removed")
    return {"probe_id": summary.probe_id, "stopped_by": summary.stopped_by,
            "rounds_recorded": summary.recorded, "rounds_dropped": summary.dropped,
            "targets": len(summary.targets), "queue_snapshots": summary.queue_snapshots,
            "fs_type": fs_type, "store": str(store.path)}


def _simulate_rounds(sim_system: str, store: Store, settings: Any, targets: int, noise: float,
                     seed: int) -> dict[str, Any]:
    import time

    import numpy as np

    from iotune.sim import load_system
    from iotune.variability.simulate import simulate_probe_trace

    system = load_system(sim_system)
    if settings.rounds is not None:
        rounds = settings.rounds
    elif settings.duration_s is not None:
        rounds = max(1, int(settings.duration_s // settings.interval_s))
    else:
        raise ConfigError("--duration: 'none' needs --rounds with --simulate")
    start = time.time() - rounds * settings.interval_s
    records = simulate_probe_trace(system, rounds, np.random.default_rng(seed), targets=targets,
                                   size=settings.size, noise=noise,
                                   interval_s=settings.interval_s, start=start,
                                   queue=settings.queue != "none")
    for record in records:
        store.append(record)
    progress(f"iotune: wrote {len(records)} SIMULATED probe round(s) of {system.name} "
             f"({targets} targets, noise {noise:g}) to {store.path}")
    return {"probe_id": records[0]["probe_id"], "simulated": True, "system": system.name,
            "rounds_recorded": len(records), "targets": targets, "store": str(store.path)}


def _probe_latencies(records: list[dict[str, Any]], backend: str | None
                     ) -> tuple[Any, str, int | None]:
    """The probe frame of one backend and one probe size, its backend and size."""
    from iotune.variability.classify import choose_backend, probe_frame, probe_records

    rounds = probe_records(records)
    chosen = choose_backend(rounds, backend, "probe rounds")
    rounds = [r for r in rounds if r.get("backend") == chosen]
    sizes = sorted({r.get("size_bytes") for r in rounds}, key=str)
    if len(sizes) > 1:
        raise DataError(f"probe rounds of several sizes ({', '.join(map(str, sizes))} bytes) "
                        "in the store; their latencies do not share one mixture")
    return probe_frame(rounds), chosen, sizes[0] if sizes else None


def _samples(source: str, records: list[dict[str, Any]], backend: str | None
             ) -> tuple[Any, str, str, str]:
    """(frame, value column, unit, description) of the samples of ``source``."""
    from iotune.variability.classify import choose_backend, relative_run_times

    if source == "probe":
        frame, chosen, size = _probe_latencies(records, backend)
        what = f"probe latencies (backend {chosen}, {format_bytes(size or 0)} writes)"
        return frame, "latency", "s", what
    from iotune.variability.classify import RUN_CAMPAIGNS

    runs = [r for r in records if r.get("campaign") in RUN_CAMPAIGNS and r.get("status") == "ok"]
    chosen = choose_backend(runs, backend, "measurements")
    frame = relative_run_times(r for r in runs if r.get("backend") == chosen)
    what = (f"measured times relative to their configuration's median (backend {chosen}, "
            "configurations with >= 3 measurements)")
    return frame, "relative", "rel", what


@click.command("states")
@config_option
@_store_option
@click.option("--source", type=click.Choice(["probe", "runs"]), default="probe",
              show_default=True, help="probe: the latencies of 'iotune probe'; runs: measured "
                                      "write times, relative to their configuration's median.")
@_backend_option
@click.option("--label", "method", type=click.Choice(["map", "sample"]), default="map",
              show_default=True, help="map: the more probable state; sample: drawn from the "
                                      "posterior (as Wan et al.), seeded.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --label sample.")
@click.option("--samples", "show_samples", is_flag=True,
              help="List every sample with its posterior and label.")
@format_option("table")
def states_command(config_path: Path | None, store_path: Path | None, source: str,
                   backend: str | None, method: str, seed: int, show_samples: bool,
                   fmt: str) -> None:
    """Fit the idle/busy log-normal mixture and label every sample.

    \b
    Examples:
      iotune states                         # probe latencies of the config's store
      iotune states --source runs --backend sim --format json
      iotune states --label sample --seed 3 --samples --format csv
    """
    from iotune.variability.classify import label_latencies
    from iotune.variability.state import fit_state_model

    frame, column, unit, what = _samples(source, _records(_store(config_path, store_path)),
                                         backend)
    values = [] if frame.empty else [float(v) for v in frame[column]]
    model = fit_state_model(values)
    labels = label_latencies(model, values, method, seed)
    posterior = model.posteriors(values)
    mix = model.mixture
    components = [{"state": c.name, "weight": c.weight, f"median_{unit}": c.median,
                   f"mean_{unit}": c.mean, "sigma": c.sigma} for c in mix.components]
    counts = {"idle": labels.count("idle"), "busy": labels.count("busy")}
    data: dict[str, Any] = {
        "source": source, "samples_of": what, "samples": mix.n, "unit": unit,
        "components": components, "bimodal": mix.bimodal, "bic_two_states": mix.bic,
        "bic_one_state": mix.bic_one, "label": method, "labels": counts,
    }
    if method == "sample":
        data["seed"] = seed
    rows = components
    if show_samples:
        keep = [c for c in ("time", "probe_id", "target", "config_key") if c in frame.columns]
        rows = [{**{c: frame.iloc[i][c] for c in keep}, column: values[i],
                 "posterior_busy": float(posterior[i]), "state": labels[i]}
                for i in range(len(values))]
        data["samples_labelled"] = rows
    verdict = ("yes" if mix.bimodal else "no (one log-normal fits as well; every sample is "
                                         "labelled idle)")
    summary = {"samples": f"{mix.n} {what}", "two states": verdict,
               "BIC": f"{mix.bic:.1f} with two states, {mix.bic_one:.1f} with one",
               f"labels ({method})": f"idle {counts['idle']}, busy {counts['busy']}"}
    text = render_table(rows) + "\n\n" + render_pairs(summary)
    emit(data, fmt, rows=rows, text=text)


@click.command("classify")
@config_option
@_store_option
@click.option("--source", type=click.Choice(["probe", "runs"]), default="probe",
              show_default=True, help="probe: predict the state of each target's probe "
                                      "--horizon rounds ahead; runs: predict the state of "
                                      "measurements that carry a probe latency.")
@_backend_option
@click.option("--classifier", "classifier_list", default="svm,rf,gb", show_default=True,
              help="Comma-separated: svm, rf (random forest), gb (gradient boosting).")
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True,
              help="k of the stratified k-fold cross-validation.")
@click.option("--horizon", type=click.IntRange(min=0), default=1, show_default=True,
              help="probe: rounds ahead whose state is predicted (0: the sample itself).")
@click.option("--window", default="10m", show_default=True,
              help="Time window of the latency mean and standard deviation features.")
@click.option("--label", "method", type=click.Choice(["map", "sample"]), default="map",
              show_default=True, help="How samples are labelled from the mixture.")
@click.option("--no-queue", is_flag=True, help="Leave out the job-queue features.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the folds, the classifiers and --label sample.")
@format_option("table")
def classify_command(config_path: Path | None, store_path: Path | None, source: str,
                     backend: str | None, classifier_list: str, folds: int, horizon: int,
                     window: str, method: str, no_queue: bool, seed: int, fmt: str) -> None:
    """Cross-validate state classifiers (SVM, random forest, gradient boosting).

    \b
    Examples:
      iotune classify                       # next-round state from the probe store
      iotune classify --classifier svm --folds 8 --horizon 2 --format json
    """
    from iotune.variability.classify import (
        CLASSIFIERS,
        add_window_features,
        cross_validate_classifiers,
        label_latencies,
        labelled_samples,
        majority_accuracy,
    )
    from iotune.variability.state import fit_state_model

    names = [n.strip() for n in classifier_list.split(",") if n.strip()]
    unknown = [n for n in names if n not in CLASSIFIERS]
    if unknown or not names:
        raise ConfigError(f"--classifier: {(unknown or [classifier_list])[0]!r} is not one of "
                          f"{', '.join(CLASSIFIERS)}")
    window_s = _duration(window, "--window")
    frame, column, _, what = _samples(source, _records(_store(config_path, store_path)), backend)
    if source == "runs":
        if horizon != 1:
            progress("iotune: --horizon does not apply to --source runs (the measurement's own "
                     "state is predicted)")
        horizon = 0
        if frame.empty or frame["latency"].isna().all():
            raise DataError("classify --source runs: no measurement carries a probe latency "
                            "(record field probe.latency_s); tune with state awareness first, "
                            "or use --source probe")
        frame = frame[frame["latency"].notna()].reset_index(drop=True)
    values = [] if frame.empty else [float(v) for v in frame[column]]
    model = fit_state_model(values)
    labels = label_latencies(model, values, method, seed)
    frame = add_window_features(frame, window_s)
    samples = labelled_samples(frame, labels, horizon=horizon, use_queue=not no_queue)
    scores = cross_validate_classifiers(samples, classifiers=names, folds=folds, seed=seed)
    rows = [s.as_dict() for s in scores]
    data = {"source": source, "samples_of": what, "samples": int(samples.labels.size),
            "busy_share": samples.busy_share, "majority_accuracy": majority_accuracy(samples),
            "features": list(samples.features.columns), "folds": folds, "horizon": horizon,
            "window_s": window_s, "label": method, "seed": seed, "classifiers": rows}
    table = render_table([{"classifier": r["classifier"],
                           "accuracy": f"{r['accuracy']:.3f} ± {r['accuracy_std']:.3f}",
                           "roc_auc": f"{r['roc_auc']:.3f} ± {r['roc_auc_std']:.3f}",
                           "method": r["description"]} for r in rows])
    ahead = ("the measurement's own state" if source == "runs" else
             f"state {horizon} round(s) ahead" if horizon else "the sample's own state")
    summary = {"samples": f"{samples.labels.size} ({what})",
               "predicts": f"{ahead}, labels by {method}",
               "busy share": f"{samples.busy_share:.3f} (always guessing "
                             f"{'busy' if samples.busy_share > 0.5 else 'idle'}: accuracy "
                             f"{majority_accuracy(samples):.3f})",
               "features": ", ".join(samples.features.columns),
               "validation": f"stratified {folds}-fold, shuffled, seed {seed}"}
    emit(data, fmt, rows=rows, text=table + "\n\n" + render_pairs(summary))


@click.command("placement")
@config_option
@_store_option
@_backend_option
@click.option("--idle", "n_idle", type=click.IntRange(min=0),
              help="Idle targets (default: MAP labels of the latest probe round in the store).")
@click.option("--busy", "n_busy", type=click.IntRange(min=0), help="Busy targets.")
@click.option("--t-idle", type=float, help="Mean time of a unit write when idle (default: the "
                                           "store's mixture).")
@click.option("--t-busy", type=float, help="Mean time of a unit write when busy.")
@click.option("--total", "total_text", help="Data to place, e.g. 288GiB: prints bytes per target.")
@format_option("table", ("table", "json", "yaml"))
def placement_command(config_path: Path | None, store_path: Path | None, backend: str | None,
                      n_idle: int | None, n_busy: int | None, t_idle: float | None,
                      t_busy: float | None, total_text: str | None, fmt: str) -> None:
    """Share of the data to send to idle targets, and the expected speedup.

    alpha = n_idle T_busy / (n_idle T_busy + n_busy T_idle); speedup over even placement
    (n_idle T_busy + n_busy T_idle) max(T_idle, T_busy) / (n T_idle T_busy). Times default
    to the means of the store's probe mixture, counts to the latest probe round's labels.

    \b
    Examples:
      iotune placement --idle 120 --busy 36 --t-idle 1.9 --t-busy 2.7
      iotune placement --total 288GiB        # states and times from the probe store
    """
    from iotune.variability.placement import placement

    if (n_idle is None) != (n_busy is None):
        raise ConfigError("--idle/--busy: give both target counts, or neither to take them "
                          "from the latest probe round")
    if (t_idle is None) != (t_busy is None):
        raise ConfigError("--t-idle/--t-busy: give both times, or neither to take them from "
                          "the store's mixture")
    total = positive_bytes(total_text, "--total") if total_text else None
    extra: dict[str, Any] = {}
    if n_idle is None or t_idle is None:
        from_store = _from_store(_records(_store(config_path, store_path)), backend)
        if n_idle is None:
            n_idle, n_busy = from_store["n_idle"], from_store["n_busy"]
            extra["idle_targets"] = from_store["idle_targets"]
            extra["busy_targets"] = from_store["busy_targets"]
            extra["round_time"] = from_store["round_time"]
        if t_idle is None:
            t_idle, t_busy = from_store["t_idle"], from_store["t_busy"]
            extra["times_from"] = from_store["what"]
    assert n_busy is not None and t_busy is not None
    advice = placement(n_idle, n_busy, t_idle, t_busy)
    data = {**advice.as_dict(), **extra}
    if total is not None:
        data["total_bytes"] = total
        data["bytes_per_idle_target"] = math.floor(total * advice.idle_share)
        data["bytes_per_busy_target"] = math.floor(total * advice.busy_share)
    emit(data, fmt, text=render_pairs(_placement_text(data)))


def _placement_text(data: dict[str, Any]) -> dict[str, Any]:
    lines: dict[str, Any] = {
        "targets": f"{data['n_idle']} idle, {data['n_busy']} busy",
        "T_idle, T_busy": f"{data['t_idle']:.4g}, {data['t_busy']:.4g} "
                          f"(ratio {data['t_busy'] / data['t_idle']:.3f})",
        "alpha (idle share)": f"{data['alpha']:.4f}",
        "per idle target": f"{data['share_per_idle_target']:.4%} of the data",
        "per busy target": f"{data['share_per_busy_target']:.4%} of the data",
        "expected speedup": f"{data['speedup']:.3f}x over even placement",
    }
    if "total_bytes" in data:
        lines["bytes per target"] = (f"{data['bytes_per_idle_target']} idle, "
                                     f"{data['bytes_per_busy_target']} busy")
    if "times_from" in data:
        lines["times from"] = data["times_from"]
    if "idle_targets" in data:
        lines["idle targets"] = " ".join(data["idle_targets"]) or "none"
        lines["busy targets"] = " ".join(data["busy_targets"]) or "none"
    return lines


def _from_store(records: list[dict[str, Any]], backend: str | None) -> dict[str, Any]:
    """Counts of the latest probe round and the mixture means of the store's probes."""
    from iotune.variability.state import fit_state_model

    frame, chosen, size = _probe_latencies(records, backend)
    values = [] if frame.empty else [float(v) for v in frame["latency"]]
    model = fit_state_model(values, size_bytes=size)
    last = frame[(frame["probe_id"] == frame["probe_id"].iloc[-1])
                 & (frame["round"] == frame["round"].iloc[-1])]
    labels = model.labels([float(v) for v in last["latency"]])
    names = [str(t) for t in last["target"]]
    return {
        "n_idle": labels.count("idle"), "n_busy": labels.count("busy"),
        "idle_targets": [n for n, s in zip(names, labels, strict=True) if s == "idle"],
        "busy_targets": [n for n, s in zip(names, labels, strict=True) if s == "busy"],
        "round_time": float(last["time"].iloc[0]),
        "t_idle": model.mixture.idle.mean, "t_busy": model.mixture.busy.mean,
        "what": f"mixture means of {model.mixture.n} probe latencies (backend {chosen})",
    }


COMMANDS = [probe_command, states_command, classify_command, placement_command]
