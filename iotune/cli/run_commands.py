"""``iotune run``, ``iotune results`` and ``iotune init``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from iotune.backends import make_backend
from iotune.backends.measure import checked_request, run_once
from iotune.cli.common import (
    backend_options,
    command_options,
    config_option,
    force_option,
    format_option,
    in_use,
    parse_assignments,
    remove_orphaned_runs,
    resolve_config,
    with_backend,
    with_command,
    with_kernel,
)
from iotune.cli.numbers import BoundedInt
from iotune.cli.store_files import store_files
from iotune.cli.verdicts import hdf5_in_effect, run_verdicts
from iotune.config import default_config_path
from iotune.errors import ConfigError
from iotune.execution import interrupt
from iotune.execution.outputs import InUse, check_output_file, write_output
from iotune.kernel_specs import own_metric_of
from iotune.printable import Plain, Word, printed
from iotune.production.jobs import is_journal
from iotune.settings.bounds import MAX_CORES, MAX_REPETITIONS
from iotune.settings.in_effect import row_not_in_effect
from iotune.settings.metrics import Metric
from iotune.settings.values import describe_value
from iotune.store import Store
from iotune.store.index import read_dataframe, write_csv
from iotune.store.records import EFFECT_PREFIX, IN_EFFECT_PREFIX, Measurement, PhaseTimes
from iotune.templates import starter_config
from iotune.ui.output import emit, progress, render_pairs


def phase_times(times: PhaseTimes, result: dict[str, Any]) -> dict[str, Any]:
    """The phases a run measured, each under its name: ``open/write/close_s`` when all
    three were timed (a kernel; a read phase follows them), else only those that were (a
    user's program has the time in its MPI-IO write calls alone, from the preload library,
    or none)."""
    phases = {"open_s": times.open, "write_s": times.write, "close_s": times.close}
    if all(t is not None for t in phases.values()) or times.read_total is not None:
        return {"open/write/close_s": times.text()}
    if "preloaded" in result and times.write is not None:
        return {"mpi_io_write_s": times.write}
    return {k: t for k, t in phases.items() if t is not None}


def summarise(record: dict[str, Any]) -> dict[str, Any]:
    """The figures of one record a person looks at first."""
    measurement = Measurement.from_record(record)
    result = record.get("result") or {}
    summary: dict[str, Any] = {
        "kernel": measurement.kernel,
        "cores": measurement.cores,
        "backend": f"{measurement.backend} ({record.get('provenance')})",
        "status": measurement.status,
    }
    if measurement.status != "ok":
        summary["error"] = measurement.error
        return summary
    summary["time_s"] = measurement.times.total
    summary.update(phase_times(measurement.times, result))
    summary["bandwidth_MiB/s"] = measurement.bandwidth_mib_s
    summary["bytes_written"] = measurement.bytes_written
    if measurement.times.read_total is not None:  # a run with a read phase (docs/reads.md)
        summary["read_time_s"] = measurement.times.read_total
        summary["read_bandwidth_MiB/s"] = measurement.read_bandwidth_mib_s
        summary["bytes_read"] = measurement.bytes_read
    metric = result.get("metric") if result.get("measure") == "regex" else None
    if isinstance(metric, dict) and metric.get("label"):  # a program's own, by its name
        named = Metric(str(metric["label"]), str(metric.get("unit")))
        summary[named.column] = metric.get("value")
        if metric.get("unit") != "s":  # time_s holds its reciprocal: not a time
            summary.pop("time_s", None)
    settings = {k: describe_value(k, v) for k, v in record["settings"].items()}
    summary["settings"] = settings or "defaults"
    hints = result.get("hints_in_effect") or {}
    shown = {k: v for k, v in hints.items() if k.startswith(("cb_", "romio_cb", "romio_ds",
                                                             "striping"))}
    if hints:  # read back from a real run (a simulated or replayed one has none)
        summary["hints_in_effect"] = shown
    hdf5 = hdf5_in_effect(result)
    if hdf5:
        summary["hdf5_in_effect"] = hdf5
    summary.update(run_verdicts(record))
    fs = result.get("filesystem") or {}
    if fs:
        summary["filesystem"] = fs.get("type")
    return summary


@click.command("run")
@config_option
@click.option("--kernel", "kernel_name",
              help="Kernel to run (default: the config's) or a proxy file from 'iotune proxy' "
                   "(its arguments, its fixed settings unless --set overrides them, and its "
                   "ranks unless --cores is given).")
@command_options
@click.option("--cores", type=BoundedInt(1, MAX_CORES),
              help="MPI ranks; required unless a proxy file gives them.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="A setting, e.g. --set cb_nodes=2 --set cb_buffer_size=4MiB "
                   "--set hint.romio_no_indep_rw=true. Repeat for several.")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE",
              help="A kernel argument, e.g. --arg particles_per_rank=1048576.")
@click.option("--reps", type=BoundedInt(1, MAX_REPETITIONS), default=1,
              show_default=True, help="Repetitions (each one a record).")
@backend_options
@click.option("--store", "store_path", type=click.Path(path_type=Path),
              help="Store to append to (default: the config's).")
@click.option("--no-store", is_flag=True, help="Do not record the result.")
@click.option("--dry-run", is_flag=True, help="Print the exact command line; run nothing.")
@format_option("table", ("table", "json", "yaml"))
def run_command(config_path: Path | None, kernel_name: str | None, app_command: str | None,
                metric: str | None, cores: int | None,
                sets: tuple[str, ...], args: tuple[str, ...], reps: int,
                backend_name: str | None, sim_system: str | None, noise: float | None,
                replay_data: Path | None,
                store_path: Path | None, no_store: bool, dry_run: bool, fmt: str) -> None:
    """Run one configuration of a kernel and record the measurement.

    \b
    Example:
      iotune run --kernel vpic --cores 4 --set cb_nodes=2 --set romio_cb_write=disable
      iotune run --command './my_app -o {scratch}/out.h5' --cores 4 --set cb_nodes=2
      iotune run --kernel proxy.yaml --cores 4
    """
    if kernel_name and app_command:
        raise ConfigError("--kernel and --command: give one (--command runs your program)")
    if store_path is not None and no_store:
        raise ConfigError("--store and --no-store: give one (--no-store records nothing)")
    config = with_backend(resolve_config(config_path), backend_name, sim_system, noise, replay_data)
    config, proxy_ranks = with_kernel(config, kernel_name)
    config = with_command(config, app_command, metric)
    cores = cores or proxy_ranks
    if cores is None:
        raise ConfigError("--cores: missing; give the number of MPI ranks")
    request = checked_request(config, cores, {**_proxy_settings(kernel_name),
                                              **parse_assignments(sets, "--set")},
                              parse_assignments(args, "--arg"))
    backend = make_backend(config)
    if dry_run:
        click.echo(backend.describe(request))
        return
    store = None if no_store else Store(store_path or config.store).check_writable()
    remove_orphaned_runs(backend)
    with interrupt.handling_signals():
        records = run_once(backend, request, reps, store, say=progress)
    summaries = [summarise(r) for r in records]
    if fmt == "table":
        emit(None, fmt, text="\n\n".join(render_pairs(s) for s in summaries))
    else:
        emit(records if reps > 1 else records[0], fmt)
    if store is not None:
        progress(f"iotune: recorded {len(records)} measurement(s) in {store.path}")
    if any(r["status"] != "ok" for r in records):
        raise SystemExit(1)


def _proxy_settings(kernel_name: str | None) -> dict[str, Any]:
    """The settings a proxy file fixes (none for a kernel name)."""
    from iotune.darshan import is_proxy_path, read_proxy

    if kernel_name is None or not is_proxy_path(kernel_name):
        return {}
    return dict(read_proxy(kernel_name).settings)


@click.command("results")
@config_option
@click.option("--store", "store_path", type=click.Path(path_type=Path),
              help="Store to read (default: the config's).")
@click.option("--kernel", help="Only this kernel.")
@click.option("--cores", type=BoundedInt(1, MAX_CORES), help="Only this scale.")
@click.option("--source", "source_text", metavar="TEXT",
              help="Only runs whose source (what measured them: backend, system, file "
                   "system, MPI library, simulator noise, recorded data) contains TEXT, "
                   "e.g. --source 'Open MPI' or --source 'noise 2'.")
@click.option("--failed", "include_failed", is_flag=True,
              help="Include failed runs and interrupted ones (killed from outside iotune).")
@click.option("--export", "export_path", type=click.Path(path_type=Path),
              help="Write all selected rows to FILE (.csv or .parquet) instead of printing "
                   "(replaces an earlier export of the same format, never the store).")
@force_option
@format_option("table")
def results_command(config_path: Path | None, store_path: Path | None, kernel: str | None,
                    cores: int | None, source_text: str | None, include_failed: bool,
                    export_path: Path | None, force: bool, fmt: str) -> None:
    """List or export the measurements in a store.

    Runs of different sources (another system, MPI library, simulator noise or recorded
    data) are never reused for each other; the table shows a source column when the
    selection holds more than one, and --source keeps one.
    """
    config = None
    if store_path is None or config_path is not None:
        config = resolve_config(config_path)
    path = (store_path or config.store) if config is not None else store_path
    assert path is not None  # --store, else a config
    guard = in_use(config, store=path)
    keep = _row_filter(cores, source_text)
    if export_path is not None:
        check_export(export_path, guard, force)
    if is_journal(Store(path)):
        _production_results(path, kernel, keep, include_failed, export_path, guard, force, fmt)
        return
    if export_path is not None and export_path.suffix == ".csv":
        # Chunk by chunk: a store of millions of runs never becomes one DataFrame.
        written = write_output(export_path, lambda tmp: write_csv(
            path, tmp, include_failed, kernel=kernel or None, keep=keep), "csv",
            option="--export", in_use=guard, force=force)
        progress(f"iotune: wrote {written} rows to {export_path}")
        return
    frame = read_dataframe(path, include_failed=include_failed, kernel=kernel or None)
    if keep is not None and not frame.empty:
        frame = keep(frame)
    if export_path is not None:
        export_frame(frame, export_path, guard, force)
        progress(f"iotune: wrote {len(frame)} rows to {export_path}")
        return
    if frame.empty:
        progress(f"iotune: no measurements in {path}" + (" matching the filters" if kernel or
                                                          keep else ""))
        return
    identity = ["recorded_at", "kernel", "cores", "backend", "provenance", "status",
                "write_time", "bandwidth_mib_s"]
    if fmt != "table" or frame["source"].nunique() > 1:
        identity.insert(4, "source")
    settings = _setting_columns(frame)
    hints = [c for c in frame.columns if str(c).startswith(IN_EFFECT_PREFIX)]
    statuses = [c for c in frame.columns if str(c).startswith(EFFECT_PREFIX)]
    columns = [c for c in identity if c in frame.columns] + settings
    if include_failed:
        columns.append("error")
    if fmt != "table":  # machine-readable: every hint read back and every status
        columns += hints + statuses
    rows = [{str(k): v for k, v in row.items()} for row in frame[columns].to_dict("records")]
    rows = _named_metrics(rows, frame)
    if fmt == "table":  # a person: sizes as they are written in a config, unset as '-'
        for row in rows:
            row.update({name: _setting_text(name, row.get(name)) for name in settings})
    if fmt == "table" and (hints or statuses):  # a person: what did not take effect
        for row, full in zip(rows, frame[settings + hints + statuses].to_dict("records"),
                             strict=True):
            row["not_in_effect"] = row_not_in_effect(
                _present(full, settings), _present(full, statuses, strip=EFFECT_PREFIX),
                _present(full, hints, strip=IN_EFFECT_PREFIX)) or "-"
    emit(rows, fmt, rows=rows)


def _production_results(path: Path, kernel: str | None, keep: Any, include_failed: bool,
                        export_path: Path | None, guard: InUse, force: bool,
                        fmt: str) -> None:
    """``results`` of a production journal: one row per job, labelled production
    (:func:`iotune.production.jobs.job_rows`); failed, running and lost jobs with
    ``--failed``."""
    import pandas as pd

    from iotune.production.jobs import job_rows

    if kernel:
        raise ConfigError(f"--kernel: {path} is a production journal: its jobs run a "
                          "campaign's application, not a kernel; --source 'campaign TAG' "
                          "selects one campaign")
    frame = pd.DataFrame(job_rows(Store(path)))
    if not include_failed and not frame.empty:
        frame = frame[frame["status"] == "ok"]
    if keep is not None and not frame.empty:
        frame = keep(frame.assign(cores=None)).drop(columns="cores")
    if export_path is not None:
        export_frame(frame, export_path, guard, force)
        progress(f"iotune: wrote {len(frame)} production job rows to {export_path}")
        return
    if frame.empty:
        progress(f"iotune: no finished production jobs in {path}" + (
            " matching the filters" if keep else "") + ("" if include_failed else
                                                          " (--failed shows the others)"))
        return
    rows = [{str(k): v for k, v in row.items() if not _missing(v)}
            for row in frame.to_dict("records")]
    progress(f"iotune: {path} is a production journal: {len(rows)} production job(s), "
             "their I/O seconds as the job scripts gave them")
    emit(rows, fmt, rows=rows)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _setting_text(name: str, value: Any) -> str:
    """A setting's cell in the results table: ``-`` when the run left it unset (the
    library's default), a byte size in binary units (``4MiB``, not ``4.194e+06``: a
    column of sizes with gaps comes back from the store as floats)."""
    if _missing(value):
        return "-"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return describe_value(name, value)


def _row_filter(cores: int | None, source_text: str | None) -> Any:
    """The rows of a frame at ``cores`` whose source contains ``source_text`` (case
    ignored); None when neither is given."""
    if not cores and not source_text:
        return None
    needle = (source_text or "").lower()

    def keep(frame: Any) -> Any:
        mask = frame["source"].astype(str).str.lower().str.contains(needle, regex=False)
        if cores:
            mask &= frame["cores"] == cores
        return frame[mask]

    return keep


def _present(row: dict[Any, Any], names: list[str], strip: str = "") -> dict[str, Any]:
    """The values of ``names`` the row has (not NaN/None), integral floats as ints (a
    column with gaps holds its integers as floats), keys without the ``strip`` prefix."""
    out: dict[str, Any] = {}
    for name in names:
        value = row.get(name)
        if value is None or (isinstance(value, float) and value != value):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        out[str(name)[len(strip):]] = value
    return out


def _setting_columns(frame: Any) -> list[str]:
    from iotune.settings.values import SETTINGS

    return [c for c in frame.columns if c in SETTINGS or str(c).startswith("hint.")]


def _named_metrics(rows: list[dict[str, Any]], frame: Any) -> list[dict[str, Any]]:
    """``rows`` with a program's own metric under its name: when every row measured the
    same named metric, ``write_time`` becomes that metric's column (``Max Write (MiB/s)``)
    in its unit; when rows measured different ones, a ``metric`` column says each
    command run's figure, unit and name, and ``write_time`` is left blank for those (it
    holds what is minimised: for a bandwidth, its reciprocal)."""
    if "write_time" not in frame.columns or "metric" not in frame.columns:
        return rows
    metrics = [own_metric_of(kernel, {k: v for k, v in params.items() if isinstance(v, str)})
               for kernel, params in zip(
                   frame["kernel"], frame[[c for c in ("metric", "metric_label",
                                                       "metric_unit") if c in frame.columns]]
                   .to_dict("records"), strict=True)]
    if all(m is not None for m in metrics) and len(set(metrics)) == 1:
        metric = metrics[0]
        assert metric is not None
        return [{(metric.column if k == "write_time" else k):
                 (_shown(metric, v) if k == "write_time" else v) for k, v in row.items()}
                for row in rows]
    for row, metric in zip(rows, metrics, strict=True):
        if metric is not None:
            value = _shown(metric, row.get("write_time"))
            row["metric"] = (None if value is None else
                             f"{value:.4g} {metric.unit} ({metric.label})")
            row["write_time"] = None
    return rows


def _shown(metric: Any, minimised: Any) -> float | None:
    """A stored time (what is minimised) in ``metric``'s unit (a
    :class:`~iotune.settings.metrics.Metric`); None for none."""
    if not isinstance(minimised, int | float) or minimised != minimised or minimised <= 0:
        return None
    return metric.shown(float(minimised))


#: The formats of ``results --export``, by the file's suffix.
EXPORT_KINDS = {".csv": "csv", ".parquet": "parquet"}


def check_export(path: Path, guard: InUse, force: bool) -> None:
    """ConfigError unless ``path`` may take an export
    (:func:`~iotune.execution.outputs.check_output_file`, then its suffix); before anything
    is read."""
    kind = EXPORT_KINDS.get(path.suffix)
    check_output_file(path, kind or "csv", option="--export", in_use=guard, force=force)
    if kind is None:
        raise ConfigError(f"--export {path}: the file must end in .csv or .parquet")


def export_frame(frame: Any, path: Path, guard: InUse, force: bool) -> None:
    """Write ``frame`` as CSV or Parquet by the file's suffix (see :func:`check_export`)."""
    check_export(path, guard, force)
    if path.suffix == ".csv":
        write_output(path, lambda tmp: frame.to_csv(tmp, index=False), "csv",
                     option="--export", in_use=guard, force=force)
        return
    try:
        write_output(path, lambda tmp: frame.to_parquet(tmp, index=False), "parquet",
                     option="--export", in_use=guard, force=force)
    except ImportError:
        raise ConfigError(f"--export {path}: Parquet needs pyarrow "
                          "(pip install 'iotune[parquet]')") from None


@click.command("init")
@click.option("-o", "--output", type=click.Path(path_type=Path),
              default=Path("iotune.yaml"), show_default=True, help="Where to write.")
@click.option("--force", is_flag=True,
              help="Replace an existing file (never the store in use or its side files).")
@click.option("--command", "launch_line", default=None, metavar="LAUNCH LINE",
              help="The line that runs your program, e.g. 'mpiexec -n 2 ./prog args': the "
                   "config tunes that program (a command kernel) at those ranks.")
def init_command(output: Path, force: bool, launch_line: str | None) -> None:
    """Write a commented starter config (./iotune.yaml) to edit.

    \b
    Example:
      iotune init --command 'mpiexec -n 4 ./my_sim input.deck' -o iotune.yaml
    """
    import yaml

    from iotune.config import build_config
    from iotune.templates.command_config import command_config, parse_launch

    launch = None if launch_line is None else parse_launch(launch_line)
    text = starter_config() if launch is None else command_config(launch)
    build_config(yaml.safe_load(text), output.absolute().parent)  # what is written loads
    guard = InUse.of(store_files(_store_in_use()))
    check_output_file(output, "config", option="-o", in_use=guard, force=True)
    if (output.exists() or output.is_symlink()) and not force:
        raise ConfigError(f"{output}: already exists; pass --force to overwrite it")
    write_output(output, text, "config", option="-o", in_use=guard, force=True)
    if launch is None:
        progress(printed("iotune: wrote {path}; edit system.scratch and space, then run: "
                         "iotune run -c {config}", path=Plain(output, "-o"),
                         config=Word(str(output), "-o")))
    else:
        progress(printed("iotune: wrote {path}; the program starts in its directory; check it "
                         "with: iotune run -c {config} --cores {ranks} --dry-run; then: "
                         "iotune train -c {config}", path=Plain(output, "-o"),
                         config=Word(str(output), "-o"), ranks=Word(launch.ranks, "--command")))


def _store_in_use() -> Path:
    """The store the config found without ``-c`` names (the built-in one when there is no
    config, or when it cannot be read: ``init`` may be run to replace a broken one)."""
    from iotune.errors import IotuneError

    found = default_config_path()
    if found is not None:
        try:
            return resolve_config(found).store
        except IotuneError:
            pass
    return Path("iotune-store.jsonl")


COMMANDS = [run_command, results_command, init_command]
