"""``iotune profile``, ``match``, ``proxy``, ``phases``, ``characterize`` and ``estimate``.

Tuning a real application from its Darshan log: its I/O summary and signature, the kernels
most like it, a proxy kernel configuration to tune in its place, and its I/O phases with
an estimate of its I/O time on this file system. Results go to stdout, progress to stderr.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click

from iotune.cli.common import config_option, force_option, format_option, in_use, resolve_config
from iotune.cli.numbers import SECONDS, SEED, BoundedInt, FiniteFloat
from iotune.errors import ConfigError
from iotune.execution.outputs import check_not_system_directory, check_output_file
from iotune.kernel_specs import Feature, kernels_with
from iotune.printable import Plain, Word, printed
from iotune.settings.bounds import MAX_CORES, MAX_REPETITIONS, MAX_SECONDS
from iotune.ui.output import emit, progress, render_pairs, render_table

FORMATS = ("table", "json", "yaml")


def _byte_size(text: str, option: str) -> int:
    from iotune.settings.units import parse_bytes

    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise ConfigError(f"{option}: {exc}") from None


def _log_argument(func: Any) -> Any:
    return click.argument("log", type=click.Path(path_type=Path))(func)


def _class_option(func: Any) -> Any:
    return click.option("--class", "class_index", type=BoundedInt(0), default=None,
                        help="Signature class to use (default: the one that moved the most "
                             "bytes; see 'iotune profile').")(func)


def _ignore_option(func: Any) -> Any:
    return click.option("--ignore-feature", "ignored", multiple=True, metavar="NAME",
                        help="Leave a signature feature out of the comparison (repeatable).")(
        func)


def _threshold_option(func: Any) -> Any:
    from iotune.darshan.classes import DEFAULT_THRESHOLD

    return click.option("--threshold", type=FiniteFloat(0, 1, min_open=True),
                        default=DEFAULT_THRESHOLD, show_default=True,
                        help="Cosine similarity for two files to share a class.")(func)


def _trace_options(func: Any) -> Any:
    from iotune.darshan.phases import DEFAULT_GAP_S

    func = click.option("--gap", type=FiniteFloat(0, MAX_SECONDS, limit=True),
                        default=DEFAULT_GAP_S,
                        show_default=True,
                        help="Seconds of idle time that end a run of operations.")(func)
    return click.option("--module", type=click.Choice(["auto", "posix", "mpiio"]),
                        default="auto", show_default=True,
                        help="DXT layer (auto: MPI-IO when traced, else POSIX).")(func)


def _min_similarity_option(func: Any) -> Any:
    from iotune.darshan.proxy import MIN_SIMILARITY

    return click.option("--min-similarity", type=FiniteFloat(0, 1), default=MIN_SIMILARITY,
                        show_default=True,
                        help="Warn when the proxy's similarity is below this.")(func)


@click.command("profile")
@_log_argument
@_threshold_option
@format_option(choices=FORMATS)
def profile_command(log: Path, threshold: float, fmt: str) -> None:
    """Summarise an application's I/O from its Darshan log, and its signature classes.

    \b
    Reads the POSIX, MPI-IO and HDF5 records: bytes, request sizes, shared and
    per-process files, collective and independent MPI-IO, HDF5 datasets. Files are
    grouped into classes of similar signature; the largest class is the one 'iotune
    match' and 'iotune proxy' use by default.
    """
    from iotune.darshan.summary import human_bytes, nonzero_bins, profile_log

    summary = profile_log(log, threshold)
    if fmt != "table":
        emit(summary, fmt)
        return
    job, totals, mpiio, hdf5 = (summary[k] for k in ("job", "totals", "mpiio", "hdf5"))
    pairs = {
        "log": summary["log"],
        "executable": job["exe"] or "-",
        "ranks": job["nprocs"],
        "run time": f"{job['run_time_s']:g} s",
        "darshan": f"{job['darshan']} ({', '.join(job['modules'])})",
        "written": f"{human_bytes(totals['bytes_written'])} in {totals['writes']} writes",
        "read": f"{human_bytes(totals['bytes_read'])} in {totals['reads']} reads",
        "files": f"{totals['files_with_data']} with data of {totals['files']}: "
                 f"{totals['shared_files']} shared, {totals['per_process_files']} per-process",
        "MPI-IO": f"{mpiio['files']} files; writes {mpiio['collective_writes']} collective, "
                  f"{mpiio['independent_writes']} independent; reads "
                  f"{mpiio['collective_reads']} collective, "
                  f"{mpiio['independent_reads']} independent",
        "HDF5": f"{hdf5['files']} files, {hdf5['datasets']} datasets "
                f"({hdf5['collective_datasets']} files with collective transfers)",
        "POSIX I/O time": f"{totals['posix_io_time_s']:.4g} s (all ranks)",
    }
    hist = [{"layer": k.replace("_", " "), "requests by size (bytes)": nonzero_bins(v)}
            for k, v in summary["request_sizes"].items()]
    class_rows = [{"class": c["class"], "files": c["files"], "bytes": f"{c['bytes_share']:.1%}",
                   "ranks": c["ranks"], "representative": c["representative"]}
                  for c in summary["classes"]]
    text = "\n\n".join([
        render_pairs(pairs), render_table(hist),
        f"Signature classes (threshold {threshold:g})\n" + render_table(class_rows),
    ])
    if summary["classes"]:
        top = summary["classes"][0]["features"]
        text += "\n\nClass 0 signature (non-zero features)\n" + render_pairs(top)
    datasets = summary["datasets"]
    if datasets["records"]:
        rows = [{**r, "bytes_written": human_bytes(r["bytes_written"]),
                 "bytes_read": human_bytes(r["bytes_read"])} for r in datasets["records"]]
        text += (f"\n\nHDF5 datasets, one record each ({len(datasets['classes'])} "
                 f"classes at threshold {threshold:g})\n" + render_table(rows))
    emit(summary, fmt, text=text)


@click.command("match")
@_log_argument
@_class_option
@_threshold_option
@_ignore_option
@click.option("--kernel-log", "kernel_logs", multiple=True, type=click.Path(path_type=Path),
              metavar="LOG", help="Darshan log of a kernel run to compare as well (repeatable).")
@format_option(choices=FORMATS)
def match_command(log: Path, class_index: int | None, threshold: float,
                  ignored: tuple[str, ...], kernel_logs: tuple[Path, ...], fmt: str) -> None:
    """Rank iotune's kernels by similarity to the application's signature.

    \b
    Each kernel variant (ior posix/mpiio/hdf5, shared or file per process, independent
    or collective; vpic) is sized like the application and signed analytically; logs of
    kernel runs given with --kernel-log are compared too. 'pairwise' normalises each
    pair of vectors, 'range' min-max scales each feature over all the signatures.
    """
    from iotune.darshan.match import match_document
    from iotune.darshan.target import signature_target

    target = signature_target(log, threshold, class_index, ignored)
    data = match_document(target, kernel_logs)
    rows, chosen, names = data["ranking"], target.chosen, target.ignored
    table = [{k: r[k] for k in ("rank", "kernel", "pairwise", "range", "source")} for r in rows]
    head = (f"{log}: class {chosen.index} ({chosen.representative.name}, "
            f"{chosen.share:.1%} of the bytes)")
    if names:
        head += f"; not compared: {', '.join(names)}"
    emit(data, fmt, text=head + "\n" + render_table(table))


@click.command("proxy")
@_log_argument
@click.option("-o", "--output", type=click.Path(path_type=Path),
              required=True, help="Proxy file to write (YAML; replaces an earlier proxy "
                                  "file, never the log or the config).")
@force_option
@click.option("--kernel", "kernel_choice",
              type=click.Choice(["auto", *kernels_with(Feature.PROXY)]), default="auto",
              show_default=True, help="Kernel to search (auto: all).")
@_class_option
@_threshold_option
@_ignore_option
@click.option("--population", type=BoundedInt(4, 10000, limit=False), default=48,
              show_default=True)
@click.option("--generations", type=BoundedInt(1, 10000, limit=False), default=40,
              show_default=True)
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--max-bytes-per-rank", default=None, metavar="BYTES",
              help="Only consider configurations writing at most this much per rank.")
@_min_similarity_option
@click.option("--run", "run_it", is_flag=True,
              help="Run the proxy for real (its system calls traced with strace) and print "
                   "the similarity measured from what it did beside the predicted one.")
@click.option("--run-ranks", type=BoundedInt(1, MAX_CORES), default=None,
              help="Ranks of the --run (default 2, never more than the proxy's).")
@config_option
@format_option(choices=FORMATS)
def proxy_command(log: Path, output: Path, force: bool, kernel_choice: str,
                  class_index: int | None,
                  threshold: float, ignored: tuple[str, ...], population: int,
                  generations: int, seed: int, max_bytes_per_rank: str | None,
                  min_similarity: float, run_it: bool, run_ranks: int | None,
                  config_path: Path | None, fmt: str) -> None:
    """Find the kernel configuration whose signature is most like the application's.

    \b
    A genetic search (seeded with the log's request sizes, memoised, polished by
    coordinate ascent) over the ior and vpic arguments, scored by the cosine similarity
    of analytic kernel signatures to the application's. Writes a proxy file to tune:
      iotune proxy app.darshan -o proxy.yaml
      iotune tune --kernel proxy.yaml --cores 4
    Below --min-similarity it warns and names the features it matches least. --run then
    runs the proxy (at --run-ranks) and measures the similarity of what it really did.
    """
    from iotune.darshan.proxy import find_proxy, write_proxy
    from iotune.darshan.search import SEARCH_KERNELS, SearchOptions
    from iotune.darshan.target import signature_target

    guard = in_use(None, inputs={"the Darshan log": log})
    check_output_file(output, "proxy", option="-o", in_use=guard, force=force)
    cap = None if max_bytes_per_rank is None else _byte_size(max_bytes_per_rank,
                                                              "--max-bytes-per-rank")
    if run_it:
        from iotune.darshan.measured import find_strace

        find_strace()  # before the search: a missing prerequisite is said first
    target = signature_target(log, threshold, class_index, ignored)
    config = resolve_config(config_path) if run_it else None
    kernels = SEARCH_KERNELS if kernel_choice == "auto" else (kernel_choice,)
    options = SearchOptions(population=population, generations=generations, seed=seed,
                            max_bytes_per_rank=cap)
    progress(f"iotune: searching {', '.join(kernels)} for class {target.chosen.index} of {log}")
    found = find_proxy(target, kernels, options, progress, min_similarity)
    write_proxy(output, found.document, in_use=guard, force=force)
    warning = found.warning
    if warning:
        progress(f"iotune: warning: {warning}")
    data = {**found.document, "output": str(output), "search": found.search_rows(),
            "warning": warning}
    measured_text = ""
    if config is not None:
        from iotune.darshan.measured import DEFAULT_RUN_RANKS, compare, run_proxy

        ranks = min(run_ranks or DEFAULT_RUN_RANKS, found.candidate.ranks)
        progress(f"iotune: running the proxy at {ranks} ranks under strace")
        data["measured"] = compare(target.chosen.vector, target.mask, found.candidate,
                                   run_proxy(found.candidate, config, ranks))
        m = data["measured"]
        measured_text = (
            f"\n\nran at {m['ranks']} ranks (MEASURED: its POSIX requests traced): similarity "
            f"to the application over {len(m['features'])} POSIX features: predicted "
            f"{m['predicted_similarity']:.4f}, measured {m['measured_similarity']:.4f} "
            f"(the run against its analytic signature: {m['model_similarity']:.4f})")
    table = render_table([{k: row[k] for k in ("kernel", "similarity", "genetic_similarity",
                                               "generations", "evaluations")}
                          for row in data["search"]])
    candidate = found.candidate
    text = (f"Proxy for {log} (class {target.chosen.index}): {candidate.kernel} at "
            f"{candidate.ranks} ranks, similarity {found.results[0].similarity:.4f}\n"
            + render_pairs({**candidate.args, **candidate.settings()})
            + f"\n\n{table}\n\n"
            + printed("wrote {path}; tune it with: iotune tune --kernel {kernel} --cores {ranks}",
                      path=Plain(output, "-o"), kernel=Word(str(output), "-o"),
                      ranks=Word(candidate.ranks, "--ranks"))
            + measured_text)
    emit(data, fmt, text=text)


@click.command("phases")
@_log_argument
@_trace_options
@click.option("--all", "show_all", is_flag=True,
              help="Show every phase, not only the relevant ones (>= 1% of time or bytes).")
@format_option(choices=FORMATS)
def phases_command(log: Path, module: str, gap: float, show_all: bool, fmt: str) -> None:
    """Find the I/O phases in a DXT trace: their weights (bytes) and request sizes.

    \b
    LOG is a Darshan log with DXT records or a darshan-dxt-parser text dump. A phase is
    the ranks' runs of consecutive operations of one kind and request size, without a
    pause longer than --gap, that happen at the same time; a phase done again is one
    phase with its repetitions counted; MPI-IO phases say whether they were collective
    and blocking (see docs/darshan.md).
    """
    from iotune.darshan.phases import trace_phases

    found = trace_phases(log, module, gap)
    data = found.document(show_all)
    columns = ["phase", "op", "request_size", "pattern", "file", "access", "blocking", "ranks",
               "reps", "per_rank", "weight", "start_s", "duration_s"]
    head = (f"{log}: {len(found.phases)} phases ({len(found.occurrences)} occurrences) "
            f"in {found.module}"
            + ("" if show_all else f", {len(data['phases'])} relevant (--all shows every one)"))
    emit(data, fmt, text=head + "\n" + render_table(data["phases"], columns))


@click.command("characterize")
@_log_argument
@click.option("-o", "--output", type=click.Path(path_type=Path),
              required=True, help="Characterisation file to write (YAML; replaces an "
                                  "earlier one, never the log or the config).")
@force_option
@_trace_options
@config_option
@click.option("--ranks", type=BoundedInt(1, MAX_CORES), default=None,
              help="Most ranks per run (default 4, never more than the phase had).")
@click.option("--scratch", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for the kernel's files (default: the config's system.scratch).")
@click.option("--api", type=click.Choice(["auto", "posix", "mpiio"]), default="auto",
              show_default=True, help="I/O interface (auto: mpiio for MPI-IO traces, else "
                                      "posix).")
@click.option("--direct", is_flag=True,
              help="O_DIRECT requests (posix api), for applications that bypass the page "
                   "cache.")
@click.option("--max-bytes-per-rank", default="64MiB", show_default=True, metavar="BYTES",
              help="Cap on each rank's bytes per run (fewer requests beyond it).")
@click.option("--repeat", type=BoundedInt(1, MAX_REPETITIONS), default=1, show_default=True,
              help="Runs per pattern (the median bandwidth is kept).")
@format_option(choices=FORMATS)
def characterize_command(log: Path, output: Path, force: bool, module: str, gap: float,
                         config_path: Path | None, ranks: int | None, scratch: Path | None,
                         api: str, direct: bool, max_bytes_per_rank: str, repeat: int,
                         fmt: str) -> None:
    """Measure this file system's bandwidth for each relevant phase pattern of a trace.

    \b
    Runs a benchmark for real (MPI, through the configured launcher) once per distinct
    pattern: transfer size = the phase's request size, one block per rank, shared file
    or file per process like the phase; writes are timed writing, reads reading data
    evicted from the page cache. Feed the output to 'iotune estimate'.
    """
    from iotune.darshan.characterize import (
        DEFAULT_MAX_RANKS,
        PatternBackend,
        characterize,
        ior_api,
        plan,
        write_characterization,
    )
    from iotune.darshan.phases import trace_phases
    from iotune.darshan.summary import human_bytes

    # the config is read after the log (a missing log is the first thing to say), but its
    # file is never an output
    guard = in_use(None, inputs={"the Darshan log": log, "the config in use": config_path})
    check_output_file(output, "characterization", option="-o", in_use=guard, force=force)
    if scratch is not None:
        check_not_system_directory(scratch, "--scratch")
    cap = _byte_size(max_bytes_per_rank, "--max-bytes-per-rank")
    found = trace_phases(log, module, gap)
    runs = plan(found.relevant, ior_api(api, found.module), ranks or DEFAULT_MAX_RANKS, cap,
                direct)
    config = resolve_config(config_path)
    if scratch is not None:
        config = dataclasses.replace(
            config, system=dataclasses.replace(config.system, scratch=scratch.resolve()))
    document = characterize(found, runs, PatternBackend(config), repeat, progress)
    write_characterization(output, document, in_use=guard, force=force)
    table = [{"pattern": r["key"], "ranks": r["ranks"], "bytes": human_bytes(r["bytes"]),
              "bandwidth_MiB_s": (r["bandwidth_bytes_s"] / 2**20
                                  if "bandwidth_bytes_s" in r else None),
              "error": r.get("error")} for r in document["patterns"]]
    text = render_table(table) + f"\n\nwrote {output}"
    emit({**document, "output": str(output)}, fmt, text=text)


@click.command("estimate")
@_log_argument
@click.option("--characterization", "characterization", required=True,
              type=click.Path(path_type=Path), help="File written by 'iotune characterize'.")
@_trace_options
@click.option("--measured", type=SECONDS, default=None,
              help="Measured I/O time in seconds to compare the total with.")
@click.option("--all", "show_all", is_flag=True, help="Show every phase in the table.")
@format_option(choices=FORMATS)
def estimate_command(log: Path, characterization: Path, module: str, gap: float,
                     measured: float | None, show_all: bool, fmt: str) -> None:
    """Estimate the I/O time of each phase and in total: weight / characterised bandwidth.

    \b
    Prints the relative error against the measured time of each phase (its wall time in
    the trace) and of the total (the traced phases, --measured when given, and the
    log's read and write time counters per rank when the log has them).
    """
    from iotune.darshan.estimate import estimate_log

    result = estimate_log(log, characterization, module, gap, measured)
    data = result.document
    rows = result.phase_rows(show_all)
    total = data["total"]
    lines = [
        f"estimated I/O time  {total['estimated_s']:.4g} s",
        f"measured ({total['measured_from']})  {total['measured_s']:.4g} s, relative error "
        + (f"{total['error_pct']:.1f}%" if total["error_pct"] is not None else "n/a"),
    ]
    if total["counters_s"] is not None:
        lines.append(f"log counters (per rank)  {total['counters_s']:.4g} s, relative error "
                     + (f"{total['counters_error_pct']:.1f}%"
                        if total["counters_error_pct"] is not None else "n/a"))
    columns = ["phase", "op", "request_size", "file", "access", "ranks", "reps", "weight_bytes",
               "bandwidth_MiB_s", "estimated_s", "measured_s", "error_pct", "bandwidth_from"]
    emit(data, fmt, text=render_table(rows, columns) + "\n\n" + "\n".join(lines))


COMMANDS = [profile_command, match_command, proxy_command, phases_command,
            characterize_command, estimate_command]
