"""Running a user's own, unmodified MPI program with a configuration's settings injected.

iotune never edits the program. For each run it:

1. makes a fresh run directory under scratch (``iotune-app-*``) and, inside it, the output
   directory the program is told about through ``{scratch}`` in its command line (the
   config's ``output_dir`` below the run directory, or the run directory itself);
2. stripes that directory with ``lfs setstripe`` when the file system is Lustre and the
   configuration has Lustre settings (elsewhere striping is recorded as not applicable);
3. writes the MPI-IO hints into a ROMIO hints file named by ``ROMIO_HINTS`` (MPICH/ROMIO)
   and into ``MPICH_MPIIO_HINTS`` (Cray MPICH), so a program that opens its files with
   ``MPI_INFO_NULL`` gets them with no help;
4. writes every MPI-IO and HDF5 setting into the settings file of the preload library
   (:mod:`iotune.preload`) and preloads it (``LD_PRELOAD``), so programs that pass their own
   ``MPI_Info`` or open files through HDF5 get them too, and every open's hints in effect,
   bytes and times are read back (:mod:`iotune.preload.report`): the result's
   ``hints_in_effect`` are those of the open that moved the data, ``data_open`` says which
   open that was and who wrote through it (None when no open moved data);
5. starts the program through the configured launcher with ``{cores}``, ``{nodes}`` and
   ``{scratch}`` replaced, and times it; the run directory is removed afterwards.

What a run measures (``metric``): ``wall`` (the program's wall time, launcher included),
``io_time`` (the slowest rank's time in MPI-IO write calls, from the preload library) or a
regular expression whose first group, found in the program's output, is the figure: in
seconds, or a bandwidth in MiB/s, with its own label (:mod:`iotune.settings.metrics`). The
record's ``result.measure`` says which and ``result.metric`` holds the label, unit and
figure; ``result.times_s.total`` holds what is minimised (the seconds, or a bandwidth's
reciprocal), so the model and the search use it as they use a kernel's time. A non-zero
exit, a timeout, a missing preload report or a missing metric is a failed record with the
tail of stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iotune.errors import ConfigError
from iotune.execution.fsinfo import filesystem_of, is_lustre
from iotune.execution.rundirs import owner, write_marker
from iotune.execution.runner import TAIL_CHARS, RunOutcome, run_command
from iotune.inputs import YamlLimitError, safe_load
from iotune.preload.report import NO_OPENS, data_open
from iotune.settings.catalogue import (
    HINT_PREFIX,
    SETTINGS,
    cray_hints,
    lfs_setstripe_args,
    mpiio_hints,
    romio_hints_text,
    settings_in_layer,
)
from iotune.settings.metrics import MATCHES, UNITS, Metric, check_label, command_metric

METRICS = ("wall", "io_time")
PRELOAD_MODES = ("auto", "yes", "no")
PLACEHOLDERS = ("cores", "nodes", "scratch")
#: Settings a program's own code decides; iotune cannot change them from outside.
NOT_INJECTABLE = tuple(s.name for s in settings_in_layer("application"))


#: How a regular-expression metric is written as one kernel argument: ``regex:PATTERN``.
REGEX_PREFIX = "regex:"
#: The keys of a metric written as a mapping.
METRIC_KEYS = ("regex", "label", "unit", "match")
#: A regex metric's fields other than its pattern, as canonical kernel arguments (present
#: only when not the default, so the arguments, and the store's keys, of a metric without
#: them stay as they were).
FLAT_METRIC_KEYS = {"label": "metric_label", "unit": "metric_unit", "match": "metric_match"}


@dataclass(frozen=True)
class Application:
    """A user's program as the config describes it (``kernel: {command: ...}``).

    ``metric`` is ``wall``, ``io_time`` or ``regex:PATTERN`` (the first group of PATTERN in
    the program's output is the figure; ``metric_match`` says whether the ``last`` or the
    ``first`` match counts, ``metric_unit`` whether it is seconds or a bandwidth in MiB/s,
    :mod:`iotune.settings.metrics`, and ``metric_label`` what it measures).
    """

    command: str
    output_dir: str | None = None
    metric: str = "wall"
    preload: str = "auto"
    metric_label: str = ""
    metric_unit: str = "s"
    metric_match: str = "last"

    @property
    def regex(self) -> re.Pattern[str] | None:
        """The metric's regular expression, or None for ``wall`` and ``io_time``."""
        if not self.metric.startswith(REGEX_PREFIX):
            return None
        return re.compile(self.metric[len(REGEX_PREFIX):])

    def as_params(self) -> dict[str, Any]:
        """The kernel arguments that stand for this program (stored with every record)."""
        params = {"command": self.command, "output_dir": self.output_dir or "",
                  "metric": self.metric, "preload": self.preload}
        defaults = {"label": "", "unit": "s", "match": "last"}
        for key, value in (("label", self.metric_label), ("unit", self.metric_unit),
                           ("match", self.metric_match)):
            if value != defaults[key]:
                params[FLAT_METRIC_KEYS[key]] = value
        return params

    @property
    def measured_by(self) -> Metric:
        """What a run's figure is called and its unit (:mod:`iotune.settings.metrics`)."""
        return command_metric(self.as_params())

    def argv(self, cores: int, nodes: int, scratch: Path) -> list[str]:
        """The program's command line with the placeholders replaced."""
        return [word.format(cores=cores, nodes=nodes, scratch=scratch)
                for word in shlex.split(self.command)]


def parse_application(raw: Mapping[str, Any], where: str = "kernel") -> Application:
    """An :class:`Application` from the config's ``kernel`` mapping; ConfigError naming the
    key otherwise."""
    known = ("command", "output_dir", "metric", "preload", *FLAT_METRIC_KEYS.values())
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown key of a command kernel; known: "
                          f"{', '.join(known)}")
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where}.command: must be the program's command line, e.g. "
                          "'./my_app -o {scratch}/out.h5'")
    try:
        words = shlex.split(command)
        for word in words:
            word.format(cores=1, nodes=1, scratch="x")
    except (ValueError, KeyError, IndexError) as exc:
        raise ConfigError(f"{where}.command: {exc}; placeholders are "
                          f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)} (write {{{{ and }}}} "
                          "for literal braces)") from None
    output_dir = raw.get("output_dir") or None
    if output_dir is not None and (not isinstance(output_dir, str) or os.path.isabs(output_dir)
                                   or ".." in Path(output_dir).parts):
        raise ConfigError(f"{where}.output_dir: {output_dir!r} must be a relative path inside "
                          "the run directory")
    metric = _parse_metric(raw, where)
    preload = raw.get("preload", "auto")
    if preload is True:
        preload = "yes"
    elif preload is False:
        preload = "no"
    if preload not in PRELOAD_MODES:
        raise ConfigError(f"{where}.preload: {preload!r} is not one of "
                          f"{', '.join(PRELOAD_MODES)}")
    if metric.name == "io_time" and preload == "no":
        raise ConfigError(f"{where}.metric: io_time is measured by the preload library; "
                          "preload: no turns it off")
    return Application(command.strip(), output_dir, metric.name, str(preload),
                       metric.label, metric.unit, metric.match)


@dataclass(frozen=True)
class _MetricArgs:
    name: str
    label: str = ""
    unit: str = "s"
    match: str = "last"


def _parse_metric(raw: Mapping[str, Any], where: str) -> _MetricArgs:
    """The metric of a command kernel's ``raw`` mapping: ``metric`` as ``wall``,
    ``io_time``, ``regex:PATTERN``, a mapping ``{regex, label, unit, match}`` or that mapping
    written in YAML flow style (``--metric '{regex: ..., unit: MiB/s}'``), or the canonical
    arguments (``metric`` with ``metric_label``, ``metric_unit``, ``metric_match``)."""
    metric = raw.get("metric", "wall")
    if isinstance(metric, str) and metric.lstrip().startswith("{"):
        import yaml

        try:
            metric = safe_load(metric)
        except YamlLimitError as exc:
            raise ConfigError(f"{where}.metric: {exc}") from None
        except yaml.YAMLError:
            raise ConfigError(f"{where}.metric: {metric!r} is not a mapping in YAML flow "
                              "style, e.g. '{regex: \"Max Write: ([0-9.]+)\", unit: MiB/s}'"
                              ) from None
    fields = {key: raw[FLAT_METRIC_KEYS[key]] for key in FLAT_METRIC_KEYS
              if raw.get(FLAT_METRIC_KEYS[key]) not in (None, "")}
    if isinstance(metric, str) and metric.startswith(REGEX_PREFIX):
        metric = {"regex": metric[len(REGEX_PREFIX):], **fields}
    elif fields:
        key = next(iter(fields))
        raise ConfigError(f"{where}.metric.{key}: only a regex metric has a {key} (wall and "
                          "io_time are seconds, lower is better)")
    if isinstance(metric, Mapping):
        unknown = sorted(str(k) for k in metric if k not in METRIC_KEYS)
        if unknown:
            raise ConfigError(f"{where}.metric.{unknown[0]}: unknown key of a metric; known: "
                              f"{', '.join(METRIC_KEYS)}")
        if not isinstance(metric.get("regex"), str):
            raise ConfigError(f"{where}.metric.regex: missing or not text; a mapping metric "
                              "is {regex: PATTERN, label: ..., unit: s or MiB/s, match: "
                              "last or first}")
        try:
            pattern = re.compile(metric["regex"])
        except re.error as exc:
            raise ConfigError(f"{where}.metric.regex: {exc}") from None
        if pattern.groups < 1:
            raise ConfigError(f"{where}.metric.regex: needs a group around the number, e.g. "
                              "'write time: ([0-9.]+)'")
        label = check_label(metric.get("label", ""), f"{where}.metric.label")
        unit = metric.get("unit", "s")
        if unit not in UNITS:
            raise ConfigError(f"{where}.metric.unit: {unit!r} is not one of "
                              f"{', '.join(UNITS)} (seconds: lower is better; MiB/s: higher "
                              "is better)")
        match = metric.get("match", "last")
        if match not in MATCHES:
            raise ConfigError(f"{where}.metric.match: {match!r} is not one of "
                              f"{', '.join(MATCHES)} (which match in the output counts)")
        return _MetricArgs(REGEX_PREFIX + metric["regex"], label, unit, match)
    if metric not in METRICS:
        raise ConfigError(f"{where}.metric: {metric!r} is not one of {', '.join(METRICS)} "
                          "or {regex: PATTERN}")
    return _MetricArgs(str(metric))


def check_injectable(settings: Mapping[str, Any], where: str = "space") -> None:
    """ConfigError for a setting iotune cannot inject into an unmodified program."""
    for name in settings:
        if name in NOT_INJECTABLE:
            raise ConfigError(f"{where}.{name}: a command kernel cannot change this from "
                              "outside the program (it is decided in the program's code)")


# ------------------------------------------------------------------ injection


def preload_settings_text(settings: Mapping[str, Any]) -> str:
    """The preload library's settings file: ``hint:<key>=<value>`` and ``hdf5:<name>=<value>``
    lines (see :mod:`iotune.preload`)."""
    lines = [f"hint:{k}={v}" for k, v in mpiio_hints(settings).items()]
    for name, value in settings.items():
        if not name.startswith(HINT_PREFIX) and SETTINGS[name].layer == "hdf5":
            lines.append(f"hdf5:{name}={SETTINGS[name].to_argument(value)}")
    return "".join(line + "\n" for line in lines)


def stripe(directory: Path, settings: Mapping[str, Any], fs_type: str) -> dict[str, Any]:
    """``lfs setstripe`` the Lustre settings on ``directory``, or why it does not apply.

    Raises RuntimeError with lfs's message when lfs fails (the run is then a failed record).
    """
    if not is_lustre(fs_type):
        return {"applicable": False, "reason": f"{fs_type} is not Lustre"}
    args = lfs_setstripe_args(settings)
    if not args:
        return {"applicable": True, "requested": None}
    command = ["lfs", "setstripe", *args, str(directory)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)}: {done.stderr.strip() or done.returncode}")
    # The layout as Lustre set it, which iotune.settings.in_effect compares with the request.
    shown = subprocess.run(["lfs", "getstripe", "-d", str(directory)], capture_output=True,
                           text=True, check=False, timeout=60)
    return {"applicable": True, "command": shlex.join(command),
            "requested": {s.name: settings.get(s.name) for s in settings_in_layer("lustre")},
            "layout": shown.stdout.strip() if shown.returncode == 0 else None}


# ------------------------------------------------------------------ one run


@dataclass(frozen=True)
class AppRun:
    """What one run of the program gave: the fields of its store record."""

    status: str
    error: str | None
    result: dict[str, Any] | None
    command: list[str]
    elapsed_s: float
    stderr_tail: str


#: The files a run writes into its run directory.
HINTS_FILE, PRELOAD_SETTINGS_FILE, PRELOAD_REPORT_FILE = (
    "romio-hints", "preload-settings", "preload.json")


def output_directory(app: Application, run_dir: Path) -> Path:
    """Where ``{scratch}`` points for a run in ``run_dir``: the config's ``output_dir``
    below the run directory, or the run directory itself."""
    return run_dir / app.output_dir if app.output_dir else run_dir


def injected_environment(run_dir: Path, settings: Mapping[str, Any],
                         preload_library: Path | None,
                         inherited_preload: str = "") -> dict[str, str]:
    """The variables a run in ``run_dir`` sets for the program: ``ROMIO_HINTS`` (always),
    ``MPICH_MPIIO_HINTS`` (when there are hints) and, with ``preload_library``, the preload
    library's ``IOTUNE_SETTINGS``, ``IOTUNE_PRELOAD_OUT`` and ``LD_PRELOAD`` (before
    ``inherited_preload``). The files they name are :func:`write_injection_files`'."""
    variables = {"ROMIO_HINTS": str(run_dir / HINTS_FILE)}
    if cray_hints(settings):
        variables["MPICH_MPIIO_HINTS"] = cray_hints(settings)
    if preload_library is not None:
        variables["IOTUNE_SETTINGS"] = str(run_dir / PRELOAD_SETTINGS_FILE)
        variables["IOTUNE_PRELOAD_OUT"] = str(run_dir / PRELOAD_REPORT_FILE)
        variables["LD_PRELOAD"] = " ".join(
            p for p in (str(preload_library), inherited_preload) if p)
    return variables


def injection_files(settings: Mapping[str, Any], preload: bool) -> dict[str, str]:
    """The files a run writes into its run directory (name -> text)."""
    files = {HINTS_FILE: romio_hints_text(settings)}
    if preload:
        files[PRELOAD_SETTINGS_FILE] = preload_settings_text(settings)
    return files


def describe_application(app: Application, *, settings: Mapping[str, Any], cores: int,
                         nodes: int, scratch: Path, launch: Any, env: Mapping[str, str],
                         preload_library: Path | None) -> str:
    """What :func:`run_application` would run, as a person reads it: the run directory
    (with a placeholder name, since each run gets a fresh one), the striping, the files
    written into it, and the program's command line with the variables set for it."""
    fs_type, _ = filesystem_of(scratch)
    run_dir = scratch / "iotune-app-XXXXXXXX"
    output = output_directory(app, run_dir)
    lines = [f"# each run: a fresh directory {run_dir} (removed after the run); "
             f"{{scratch}} is {output}"]
    striping = lfs_setstripe_args(settings)
    if striping and is_lustre(fs_type):
        lines.append(f"# lfs setstripe {' '.join(striping)} {output}")
    elif striping:
        lines.append(f"# striping not applied: {fs_type} is not Lustre")
    for name, text in injection_files(settings, preload_library is not None).items():
        lines.append(f"# {run_dir / name}:")
        lines += [f"#   {line}" for line in text.splitlines()] or ["#   (empty)"]
    if preload_library is None:
        lines.append("# preload library: not used" + (
            " (preload: auto and it is not built; 'python -m iotune.preload' builds it)"
            if app.preload == "auto" else " (preload: no)"))
    variables = injected_environment(run_dir, settings, preload_library,
                                     env.get("LD_PRELOAD", ""))
    argv = launch(app.argv(cores, nodes, output))
    lines.append(shlex.join(["env", *(f"{k}={v}" for k, v in variables.items()), *argv]))
    return "\n".join(lines)


def run_application(app: Application, *, settings: Mapping[str, Any], cores: int, nodes: int,
                    scratch: Path, launch: Any, timeout_s: float, env: Mapping[str, str],
                    preload_library: Path | None, cwd: Path | None = None) -> AppRun:
    """Run ``app`` once with ``settings`` injected (see the module docstring).

    ``launch(program_argv) -> argv`` wraps the program's command line in the launcher;
    ``preload_library`` is the built library (None: not preloaded). Never raises for a run
    that fails: the failure is in the returned :class:`AppRun`.
    """
    fs_type, _ = filesystem_of(scratch)
    run_dir = Path(tempfile.mkdtemp(prefix="iotune-app-", dir=scratch))
    write_marker(run_dir, owner())
    try:
        output = output_directory(app, run_dir)
        output.mkdir(parents=True, exist_ok=True)
        try:
            striping = stripe(output, settings, fs_type)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            return AppRun("failed", f"striping: {exc}", None, [], 0.0, "")
        for name, text in injection_files(settings, preload_library is not None).items():
            (run_dir / name).write_text(text)
        run_env = {**env, **injected_environment(run_dir, settings, preload_library,
                                                 env.get("LD_PRELOAD", ""))}
        argv = launch(app.argv(cores, nodes, output))
        outcome = run_command(argv, timeout_s, env=run_env, cwd=str(cwd) if cwd else None,
                              expect_json=False)
        report = run_dir / PRELOAD_REPORT_FILE
        preloaded = _read_report(report) if preload_library is not None else None
        return _judge(app, outcome, settings, striping, preloaded, preload_library is not None)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(run_dir)


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _judge(app: Application, outcome: RunOutcome, settings: Mapping[str, Any],
           striping: dict[str, Any], preloaded: dict[str, Any] | None,
           expected_report: bool) -> AppRun:
    """The record fields of a finished run: which metric, and whether it was found."""
    command = list(outcome.argv)
    if not outcome.ok:
        return AppRun(outcome.status, outcome.reason, None, command, outcome.elapsed_s,
                      outcome.stderr_tail)
    io_time = _number((preloaded or {}).get("write_time_s"))
    written = (preloaded or {}).get("bytes_written")
    shown = app.measured_by
    total: float | None
    why: str | None
    if app.metric == "wall":
        measure, total, why = "wall", outcome.elapsed_s, None
    elif app.metric == "io_time":
        measure, total = "io_time", io_time
        why = ("the preload library wrote no report (is the program an MPI program, and "
               "does it call MPI_Finalize?)" if preloaded is None else
               "the program made no MPI-IO write call" if not io_time else None)
    else:
        measure, figure, why = "regex", _metric_from(app, outcome), None
        if figure is None:
            assert app.regex is not None
            why = f"metric: no match of {app.regex.pattern!r} in the program's output"
        total = None if figure is None or figure <= 0 else shown.minimised(figure)
        if figure is not None and figure <= 0:
            why = f"metric: {figure!r} is not a positive {shown.unit} figure"
    if why is not None or total is None or total <= 0:
        return AppRun("failed", why or f"metric: {total!r} is not a positive time", None,
                      command, outcome.elapsed_s, outcome.stderr_tail)
    data = data_open(preloaded) if preloaded is not None else NO_OPENS
    if data == NO_OPENS:  # a version-1 report: the hints of its first file
        files = (preloaded or {}).get("files") or []
        hints = dict(files[0].get("hints_in_effect") or {}) if files else {}
    else:  # those of the open that moved the data; none when no open did
        hints = dict(data["hints_in_effect"]) if isinstance(data, dict) else {}
    result: dict[str, Any] = {
        "measure": measure,
        "times_s": {"total": total, "open": None, "write": io_time, "close": None},
        "wall_s": round(outcome.elapsed_s, 6),
        "io_time_s": io_time,
        "bytes_written": int(written) if isinstance(written, int | float) and written else None,
        # A bandwidth metric is the program's own figure; bytes over its reciprocal are not.
        "bandwidth_mib_s": (float(written) / 2**20 / total if isinstance(written, int | float)
                            and written and not shown.higher_is_better else None),
        "metric": {**shown.document(), "value": shown.shown(total)},
        "hints_requested": mpiio_hints(settings),
        "hints_in_effect": hints,
        "hdf5_settings_in_effect": dict((preloaded or {}).get("hdf5_settings_in_effect") or {}),
        "striping": striping,
        "preloaded": expected_report,
        "preload": preloaded,
        **({} if data == NO_OPENS else {"data_open": data}),
        "stdout_tail": outcome.stdout[-TAIL_CHARS:],
    }
    return AppRun("ok", None, result, command, outcome.elapsed_s, outcome.stderr_tail)


def _metric_from(app: Application, outcome: RunOutcome) -> float | None:
    """The metric's first group at its last (or, ``metric_match: first``, first) match in
    stdout, else in stderr; None when neither matches or the group is not a number."""
    assert app.regex is not None
    for text in (outcome.stdout, outcome.stderr_tail):
        found = app.regex.findall(text)
        if found:
            chosen = found[0] if app.metric_match == "first" else found[-1]
            with contextlib.suppress(ValueError):
                return float(chosen[0] if isinstance(chosen, tuple) else chosen)
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None
