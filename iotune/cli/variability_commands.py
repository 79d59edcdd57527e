"""``iotune probe``, ``states``, ``classify`` and ``placement``: file-system states.

Thin commands over :mod:`iotune.variability`; ``docs/variability.md`` explains the method.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from iotune.cli.common import config_option, format_option, resolve_config
from iotune.cli.numbers import SECONDS, SEED, BoundedInt, FiniteFloat
from iotune.errors import ConfigError
from iotune.execution.outputs import check_not_system_directory
from iotune.settings.bounds import MAX_NOISE, MAX_OSTS, MAX_PROBE_ROUNDS
from iotune.settings.catalogue import ByteSize
from iotune.settings.units import parse_duration
from iotune.settings.values import normalise_value
from iotune.store import Store
from iotune.ui.output import emit, progress, render_pairs, render_table

if TYPE_CHECKING:
    from iotune.config import Config
    from iotune.variability.probe import ProbeSettings
    from iotune.variability.samples import Samples


def _duration(value: str, option: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ConfigError(f"{option}: {exc}") from None


def _store(config_path: Path | None, store_path: Path | None) -> Store:
    return Store(store_path if store_path is not None else resolve_config(config_path).store)


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
@click.option("--rounds", type=BoundedInt(1, MAX_PROBE_ROUNDS), help="Stop after this many rounds.")
@click.option("--large", "large_text", default="none", show_default=True,
              help="Ground truth: sizes of large writes, e.g. 64MiB,256MiB,1GiB (Wan et al.'s), "
                   "one per target every --large-every rounds, in turn; none: no large writes.")
@click.option("--large-every", type=BoundedInt(1, MAX_PROBE_ROUNDS), default=10, show_default=True,
              help="Rounds between two rounds with large writes.")
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
@click.option("--targets", type=BoundedInt(1, MAX_OSTS), default=4, show_default=True,
              help="--simulate: number of simulated OSTs.")
@click.option("--noise", type=FiniteFloat(0, MAX_NOISE, limit=True), default=1.0, show_default=True,
              help="--simulate: noise level of the preset.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="--simulate: seed.")
@format_option("table", ("table", "json", "yaml"))
def probe_command(config_path: Path | None, store_path: Path | None, interval: str,
                  duration: str, size_text: str, rounds: int | None, large_text: str,
                  large_every: int, scratch: Path | None,
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
    size = normalise_value(ByteSize(), size_text, "--size")
    large = () if large_text.strip().lower() == "none" else tuple(
        normalise_value(ByteSize(), part.strip(), "--large") for part in large_text.split(","))
    settings = ProbeSettings(interval_s, duration_s, size, rounds, queue,
                             _duration(queue_interval, "--queue-interval"), large, large_every)
    config = resolve_config(config_path)
    if scratch is not None:
        check_not_system_directory(scratch, "--scratch")
    store = Store(store_path if store_path is not None else config.store).check_writable()
    if sim_system is not None:
        summary = _simulate_rounds(sim_system, store, settings, targets, noise, seed)
    else:
        summary = _probe(config, scratch, osts, store, settings)
    emit(summary, fmt, text=render_pairs(summary))


def _probe(config: Config, scratch: Path | None, osts: str | None, store: Store,
           settings: ProbeSettings) -> dict[str, Any]:
    from iotune.variability.probe import probe_directory

    directory = scratch if scratch is not None else config.system.scratch
    summary = probe_directory(directory, store, settings, osts=osts,
                              ost_count=config.system.ost_count, system=config.system.name,
                              progress=progress)
    progress(f"iotune: probe stopped ({summary.stopped_by}): {summary.recorded} round(s) "
             f"recorded, {summary.dropped} unfinished round(s) dropped; probe files removed")
    return {**summary.as_dict(), "store": str(store.path)}


def _simulate_rounds(sim_system: str, store: Store, settings: ProbeSettings, targets: int,
                     noise: float, seed: int) -> dict[str, Any]:
    from iotune.sim import load_system
    from iotune.variability.simulate import record_simulated_probe

    system = load_system(sim_system)
    records = record_simulated_probe(system, store, settings, targets=targets, noise=noise,
                                     seed=seed)
    progress(f"iotune: wrote {len(records)} SIMULATED probe round(s) of {system.name} "
             f"({targets} targets, noise {noise:g}) to {store.path}")
    return {"probe_id": records[0]["probe_id"], "simulated": True, "system": system.name,
            "rounds_recorded": len(records), "targets": targets, "store": str(store.path)}


def _samples(config_path: Path | None, store_path: Path | None, source: str,
             backend: str | None) -> Samples:
    from iotune.variability.samples import samples_of, store_records

    return samples_of(store_records(_store(config_path, store_path)), source, backend)


@click.command("states")
@config_option
@_store_option
@click.option("--source", type=click.Choice(["probe", "runs"]), default="probe",
              show_default=True, help="probe: the latencies of 'iotune probe'; runs: measured "
                                      "write times, relative to their configuration's idle "
                                      "level from its other measurements.")
@_backend_option
@click.option("--label", "method", type=click.Choice(["map", "sample"]), default="map",
              show_default=True, help="map: the more probable state; sample: drawn from the "
                                      "posterior (as Wan et al.), seeded.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of --label sample.")
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
    from iotune.variability.analysis import label_states

    states = label_states(_samples(config_path, store_path, source, backend), method, seed)
    data = states.document(with_samples=show_samples)
    rows = data["samples_labelled"] if show_samples else data["components"]
    mix = states.model.mixture
    verdict = ("yes" if mix.bimodal else "no (one log-normal fits as well; every sample is "
                                         "labelled idle)")
    summary = {"samples": f"{mix.n} {states.samples.description}", "two states": verdict,
               "BIC": f"{mix.bic:.1f} with two states, {mix.bic_one:.1f} with one",
               f"labels ({method})": f"idle {states.counts['idle']}, busy "
                                     f"{states.counts['busy']}"}
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
@click.option("--classifier", "classifier_list", default="svm,rf,gb,cart,nb,mlp",
              show_default=True,
              help="Comma-separated, the paper's six: svm, rf (random forest), gb (gradient "
                   "boosting), cart (decision tree), nb (naive Bayes), mlp (neural network).")
@click.option("--per-target/--pooled", "per_target", default=None,
              help="One mixture and classifier per probed target (the default when the "
                   "probes name several), or one over all targets.")
@click.option("--validation", type=click.Choice(["kfold", "time", "both"]), default="both",
              show_default=True, help="kfold: stratified shuffled k-fold; time: train on the "
                                      "earlier --train-fraction of the record, test on the "
                                      "rest; both.")
@click.option("--folds", type=BoundedInt(2), default=5, show_default=True,
              help="k of the stratified k-fold cross-validation.")
@click.option("--train-fraction", type=FiniteFloat(0, 1, min_open=True, max_open=True),
              default=0.8, show_default=True,
              help="Time-ordered validation: share of the samples, earliest first, to train "
                   "on (the paper: 8 of 10 days).")
@click.option("--predict", type=click.Choice(["auto", "next", "large"]), default="auto",
              show_default=True,
              help="probe: next = the state of the probe --horizon rounds on; large = that of "
                   "the large write after the probe (iotune probe --large); auto = large when "
                   "the rounds have large writes.")
@click.option("--horizon", type=BoundedInt(0, MAX_PROBE_ROUNDS), default=1, show_default=True,
              help="probe: rounds ahead whose state is predicted (0: the sample itself).")
@click.option("--window", default="10m", show_default=True,
              help="Time window of the latency mean and standard deviation features.")
@click.option("--label", "method", type=click.Choice(["map", "sample"]), default="map",
              show_default=True, help="How samples are labelled from the mixture.")
@click.option("--no-queue", is_flag=True, help="Leave out the job-queue features.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the folds, the classifiers and --label sample.")
@format_option("table")
def classify_command(config_path: Path | None, store_path: Path | None, source: str,
                     backend: str | None, classifier_list: str, per_target: bool | None,
                     validation: str, folds: int, train_fraction: float, predict: str,
                     horizon: int, window: str, method: str, no_queue: bool, seed: int,
                     fmt: str) -> None:
    """Score state classifiers (the paper's six: SVM, random forest, gradient boosting,
    CART, naive Bayes, MLP), per target.

    They predict the state of the large write after each probe when the probe rounds have
    large writes (iotune probe --large), else the state of the next probe (--predict).

    Each classifier is scored by shuffled k-fold cross-validation and by training on the
    earlier part of the record and testing on the later part (--validation). Progress on
    stderr, one line per classifier and target.

    \b
    Examples:
      iotune classify                       # per target, both validations
      iotune classify --predict next        # the next probe's state, even with large writes
      iotune classify --pooled --validation time --train-fraction 0.6 --format json
      iotune classify --classifier svm --folds 8 --horizon 2 --format csv
    """
    from iotune.ui.terminal import make_progress
    from iotune.variability.analysis import parse_classifiers
    from iotune.variability.classification import (
        ClassifyOptions,
        plan_classification,
        run_classification,
    )

    names = parse_classifiers(classifier_list)
    window_s = _duration(window, "--window")
    samples = _samples(config_path, store_path, source, backend)
    if source == "runs" and horizon != 1:
        progress("iotune: --horizon does not apply to --source runs (the measurement's own "
                 "state is predicted)")
    options = ClassifyOptions(names, folds, horizon, window_s, method, not no_queue, seed,
                              validation, train_fraction, per_target, predict)
    plan = plan_classification(samples, options)
    for target, reason in plan.skipped.items():
        progress(f"iotune: target {target} skipped: {reason}")
    with make_progress(plan.steps, "classify") as bar:
        result = run_classification(plan, on_step=bar.advance)
    data = result.document()
    emit(data, fmt, rows=data["scores"], text=_classify_text(data, result.predicts))


def _classify_text(data: dict[str, Any], predicts: str) -> str:
    """The table output of ``classify``: per classifier, then per target and classifier."""
    many = len(data["targets"]) > 1

    def spread(row: dict[str, Any], key: str) -> str:
        if row[key] is None:
            return "-"
        text = f"{row[key]:.3f}"
        return text + (f" ({row[key + '_min']:.3f}-{row[key + '_max']:.3f})" if many else "")

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    summary = render_table([{"classifier": r["classifier"],
                             "k-fold accuracy": spread(r, "accuracy"),
                             "k-fold roc_auc": number(r["roc_auc"]),
                             "time-ordered accuracy": spread(r, "time_accuracy"),
                             "time-ordered roc_auc": number(r["time_roc_auc"]),
                             "method": r["description"]} for r in data["classifiers"]])
    parts = [summary]
    if many:
        parts.append(render_table([{"target": r["target"], "classifier": r["classifier"],
                                    "samples": r["samples"],
                                    "k-fold accuracy": number(r["accuracy"]),
                                    "time-ordered accuracy": number(r["time_accuracy"]),
                                    "guessing": number(r["majority_accuracy"])}
                                   for r in data["scores"]]))
    first = data["classifiers"][0]
    baseline = ", ".join(f"{name} {number(first[key])}" for name, key in (
        ("k-fold", "majority_accuracy"), ("time-ordered", "time_majority_accuracy"))
        if first[key] is not None)
    validation = {"kfold": f"stratified {data['folds']}-fold, shuffled, seed {data['seed']}",
                  "time": f"train on the earliest {data['train_fraction']:.0%}, test on the "
                          "rest"}
    chosen = ["kfold", "time"] if data["validation"] == "both" else [data["validation"]]
    pairs = {"samples": f"{data['samples']} ({data['samples_of']})",
             "targets": (f"{len(data['targets'])}, one mixture and classifier each"
                         + (" (accuracy: mean (lowest-highest))" if many else "")
                         if data["per_target"] else "pooled"),
             "predicts": f"{predicts}, labels by {data['label']}",
             "busy share": f"{data['busy_share']:.3f}",
             "guessing": f"accuracy of always guessing the more frequent state: {baseline}",
             "features": ", ".join(data["features"]),
             "validation": "; ".join(validation[v] for v in chosen)}
    if data["skipped"]:
        pairs["skipped"] = ", ".join(sorted(data["skipped"]))
    return "\n\n".join([*parts, render_pairs(pairs)])


@click.command("placement")
@config_option
@_store_option
@_backend_option
@click.option("--idle", "n_idle", type=BoundedInt(0, MAX_OSTS),
              help="Idle targets (default: MAP labels of the latest probe round in the store).")
@click.option("--busy", "n_busy", type=BoundedInt(0, MAX_OSTS), help="Busy targets.")
@click.option("--t-idle", type=SECONDS, help="Mean time of a unit write when idle (default: the "
                                           "store's mixture).")
@click.option("--t-busy", type=SECONDS, help="Mean time of a unit write when busy.")
@click.option("--total", "total_text", help="Data to place, e.g. 288GiB: prints bytes per target.")
@click.option("--classifier", "classifier", default="svm", show_default=True,
              help="Classifier whose forecasts the replay places by (svm, rf, gb, cart, nb, "
                   "mlp).")
@click.option("--no-replay", is_flag=True,
              help="Only the analytic speedup; do not replay the store's probe rounds.")
@format_option("table", ("table", "json", "yaml"))
def placement_command(config_path: Path | None, store_path: Path | None, backend: str | None,
                      n_idle: int | None, n_busy: int | None, t_idle: float | None,
                      t_busy: float | None, total_text: str | None, classifier: str,
                      no_replay: bool, fmt: str) -> None:
    """Share of the data to send to idle targets, the expected speedup, and the gain
    replayed on the store's probe rounds.

    alpha = n_idle T_busy / (n_idle T_busy + n_busy T_idle); speedup over even placement
    (n_idle T_busy + n_busy T_idle) max(T_idle, T_busy) / (n T_idle T_busy). Times default
    to the means of the store's probe mixture, counts to the latest probe round's labels.
    The speedup assumes right forecasts and mean times; the replay places each recorded
    round by forecasts (last round's state, the classifier's, hindsight) and says when
    prediction does not pay, and why.

    \b
    Examples:
      iotune placement --idle 120 --busy 36 --t-idle 1.9 --t-busy 2.7
      iotune placement --total 288GiB        # states and times from the probe store
      iotune placement --classifier rf --format json
    """
    from iotune.variability.analysis import (
        latest_probe_states,
        parse_classifiers,
        placement_document,
        replay_document,
    )
    from iotune.variability.samples import store_records

    if (n_idle is None) != (n_busy is None):
        raise ConfigError("--idle/--busy: give both target counts, or neither to take them "
                          "from the latest probe round")
    if (t_idle is None) != (t_busy is None):
        raise ConfigError("--t-idle/--t-busy: give both times, or neither to take them from "
                          "the store's mixture")
    if len(parse_classifiers(classifier)) != 1:
        raise ConfigError(f"--classifier: {classifier!r} is not one classifier name")
    total = normalise_value(ByteSize(), total_text, "--total") if total_text else None
    counts = None if n_idle is None or n_busy is None else (n_idle, n_busy)
    times = None if t_idle is None or t_busy is None else (t_idle, t_busy)
    probe_states = None
    records = None
    if counts is None or times is None:
        records = store_records(_store(config_path, store_path))
        probe_states = latest_probe_states(records, backend)
    data = placement_document(counts, times, probe_states, total)
    if not no_replay:
        if records is None:
            records = _records_or_reason(config_path, store_path)
        data["replay"] = replay_document(records, backend, classifier)
    emit(data, fmt, text=render_pairs(_placement_text(data)))


def _records_or_reason(config_path: Path | None, store_path: Path | None) -> Any:
    """The store's records, or why there are none (a string) when the store is missing."""
    from iotune.errors import StoreError
    from iotune.variability.samples import store_records

    try:
        return store_records(_store(config_path, store_path))
    except StoreError as exc:
        return str(exc)


def _placement_text(data: dict[str, Any]) -> dict[str, Any]:
    lines: dict[str, Any] = {
        "targets": f"{data['n_idle']} idle, {data['n_busy']} busy",
        "T_idle, T_busy": f"{data['t_idle']:.4g}, {data['t_busy']:.4g} "
                          f"(ratio {data['t_busy'] / data['t_idle']:.3f})",
        "alpha (idle share)": f"{data['alpha']:.4f}",
        "per idle target": f"{data['share_per_idle_target']:.4%} of the data",
        "per busy target": f"{data['share_per_busy_target']:.4%} of the data",
        "expected speedup": f"{data['speedup']:.3f}x over even placement (analytic: "
                            "right forecasts, every target at its state's mean time)",
    }
    if "total_bytes" in data:
        lines["bytes per target"] = (f"{data['bytes_per_idle_target']} idle, "
                                     f"{data['bytes_per_busy_target']} busy")
    if "times_from" in data:
        lines["times from"] = data["times_from"]
    if "idle_targets" in data:
        lines["idle targets"] = " ".join(data["idle_targets"]) or "none"
        lines["busy targets"] = " ".join(data["busy_targets"]) or "none"
    if "replay" in data:
        lines.update(_replay_text(data["replay"]))
    return lines


def _replay_text(replay: dict[str, Any]) -> dict[str, Any]:
    """The replay's lines of the ``placement`` table: gains, accuracy and the verdict."""
    if "not_replayed" in replay:
        return {"replayed gain": f"not replayed: {replay['not_replayed']}"}
    forecasts = replay["forecasts"]
    gains = ", ".join(f"{f['forecast']} {f['mean_gain']:.3f}x ({f['faster']} faster, "
                      f"{f['slower']} slower)" for f in forecasts)
    accuracy = ", ".join(f"{f['forecast']} {f['accuracy']:.1%}" for f in forecasts
                         if f["forecast"] != "hindsight")
    return {"replayed gain": f"{gains}; mean over {replay['test_rounds']} rounds",
            "replayed on": (f"the store's {replay['replayed_on']}; the last "
                            f"{replay['test_rounds']} rounds, {replay['classifier']} trained "
                            f"on the {replay['train_rounds']} before"),
            "forecast accuracy": (f"{accuracy}, always idle {replay['guessing_accuracy']:.1%}"
                                  f"; busy again next round {replay['busy_persistence']:.1%}"),
            "placement": replay["verdict"]}


COMMANDS = [probe_command, states_command, classify_command, placement_command]
