"""Every command, given bad input, answers in one line and changes nothing.

Each case runs one command in a copy of a small workspace (a store with two simulated
records, a config, a tuned file, a replay CSV) and checks: a non-zero exit, no traceback,
exactly one ``iotune: error:`` line holding the fragments given (the key or value and the
rule), and every file of the workspace byte-identical afterwards (the store's cache, which
a reader may bring up to date, is derived and not compared), with no entry added or
removed. A case may add named pipes and symbolic links; a case with a named pipe must
answer within :data:`PIPE_SECONDS`, so that one that opens the pipe fails instead of hanging.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pytest

from tests.cli_result import error_line, invoke, isolate
from tests.deadline import within

SIM = ("--backend", "sim", "--system", "hopper")
GOOD_CONFIG = ("store: st.jsonl\nbackend: {name: sim}\nspace: {cb_nodes: [1, 2]}\n"
               "train: {scales: [{cores: 2}]}\n")
GOOD_TUNED = "kernel: vpic\ncores: 4\nsettings: {cb_nodes: 2}\n"
#: A production journal's one line: job 1 of campaign x started.
PRODUCTION_JOB = ('{"kind": "production_job", "event": "start", "tag": "x", "job_id": "1", '
                  '"config": "default", "settings": {}, "role": "baseline", "schema_version": 1, '
                  '"id": "0123456789abcdef0123456789abcdef", '
                  '"recorded_at": "2026-01-01T00:00:00+00:00"}\n')
#: The head of a tuned file for the cases that add a field past iotune's YAML limits.
TUNED_HEAD = "kernel: vpic\ncores: 4\nsettings: {cb_nodes: 2}\n"
#: Nine levels of anchors, each repeating the one before ten times (10^9 values).
LAUGHS = ["l0: &l0 [" + ", ".join(["lol"] * 10) + "]",
          *(f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]" for n in range(1, 9))]
#: ``{key}:`` holding the anchors of LAUGHS.
BILLION_LAUGHS = "{key}:\n" + "".join(f"  {line}\n" for line in LAUGHS)
#: A tuned file and a config one byte over the 4 MiB limit of a YAML input.
BIG_TUNED = TUNED_HEAD + "reason: " + "x" * (4 * 2**20 - len(TUNED_HEAD) - len("reason: ") + 1)
BIG_CONFIG = GOOD_CONFIG + "# " + "x" * (4 * 2**20 - len(GOOD_CONFIG) - 2 + 1)
GOOD_CSV = "cores,cb_nodes,write_time\n4,,2.0\n4,1,1.5\n4,2,1.0\n4,,2.1\n"
JOB_START = ("job", "start", "--tag", "x", "--job-id", "1")
JOB_FINISH = ("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "3")
#: A workload sidecar for the knowledge base's cases (a replay CSV's system and workload).
KB_SIDECAR = "system: cori\nfile_system: lustre\nlayer: hdf5\noperation: write\n"


def landscape(csv: str = GOOD_CSV, sidecar: str = KB_SIDECAR) -> dict[str, str]:
    """``d.csv`` and its sidecar ``d.workload.yaml``, for a case's ``files``."""
    return {"d_csv": csv, "d.workload.yaml": sidecar}

#: Seconds a case with a named pipe may take: a refusal needs no wait, an open pipe waits
#: for ever (the issue's bound for every bad input is 2 s).
PIPE_SECONDS = 2.0
#: The hopper sim preset, for presets with one value changed.
HOPPER = resources.files("iotune.sim").joinpath("systems/hopper.yaml").read_text()


@dataclass(frozen=True)
class Case:
    """``iotune ARGS`` in the workspace with ``files`` added, a named pipe at each of
    ``fifos`` and a symbolic link at each key of ``links`` (to its value); the error line
    must hold every one of ``says``."""

    args: tuple[str, ...]
    says: tuple[str, ...]
    files: dict[str, str | bytes] = field(default_factory=dict)
    fifos: tuple[str, ...] = ()
    links: dict[str, str] = field(default_factory=dict)
    #: Environment variables the command runs with.
    env: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return " ".join(self.args)[:80]


def case(*args: str, says: str | tuple[str, ...], fifos: tuple[str, ...] = (),
         links: dict[str, str] | None = None, **files: str | bytes) -> Case:
    """A case; ``files`` are named with ``_`` for ``.`` (``bad_yaml`` is ``bad.yaml``)."""
    named = {name.replace("_", ".", 1): body for name, body in files.items()}
    return Case(tuple(args), (says,) if isinstance(says, str) else says, named, fifos,
                dict(links or {}))


def config(body: str, **files: str | bytes) -> dict[str, str | bytes]:
    return {"bad_yaml": body, **files}


CASES = [
    # apply: tuned files
    case("apply", "nothere.yaml", says=("nothere.yaml", "tuned file not found")),
    case("apply", "text.txt", says=("text.txt", "no 'settings' key")),
    case("apply", "bin.dat", says=("bin.dat", "not UTF-8")),
    case("apply", "tuned.yaml", "--format", "nope", says=("'--format'", "'nope' is not one of")),
    case("apply", "tuned.yaml", "--dir", "$(touch x)", says=("--dir", "one shell word")),
    case("apply", "t.yaml", says=("kernel", "not a kernel iotune knows"),
         t_yaml='kernel: "x\\ntouch pwned\\n#"\ncores: 4\nsettings: {cb_nodes: 2}\n'),
    case("apply", "t.yaml", "--format", "h5py", says=("kernel", "not a kernel iotune knows"),
         t_yaml="kernel: \"x')\\nimport os\"\ncores: 4\nsettings: {cb_nodes: 2}\n"),
    case("apply", "t.yaml", says=("settings", "is not a mapping"), t_yaml="settings: [1, 2]\n"),
    case("apply", "t.yaml", says=("cores", "positive integer"),
         t_yaml="kernel: vpic\ncores: abc\nsettings: {}\n"),
    case("apply", "t.yaml", says=("cores", "at most"),
         t_yaml="kernel: vpic\ncores: 99999999999999999999\nsettings: {}\n"),
    case("apply", "t.yaml", says=("provenance",),
         t_yaml="kernel: vpic\nprovenance: \"x\\ny\"\nsettings: {}\n"),
    case("apply", "t.yaml", says=("nope", "unknown key"), t_yaml="nope: 1\nsettings: {}\n"),
    case("apply", "t.yaml", says=("settings.cb_nodes", "positive integer"),
         t_yaml="settings: {cb_nodes: abc}\n"),
    case("apply", "t.yaml", says=("settings.cb_config_list",),
         t_yaml="settings: {cb_config_list: \"*:1\\nrm -rf /\"}\n"),
    case("apply", "t.yaml", says=("t.yaml", "malformed YAML"), t_yaml="settings: [\n"),
    # apply: per-file settings (files:)
    case("apply", "t.yaml", says=("files[0]", "is not a mapping {pattern: GLOB, settings"),
         t_yaml="settings: {}\nfiles: ['*.h5']\n"),
    case("apply", "t.yaml", says=("files", "is not a file glob (non-empty text)"),
         t_yaml="settings: {}\nfiles: {'': {cb_nodes: 2}}\n"),
    case("apply", "t.yaml", says=("files", "is not a file glob"),
         t_yaml="settings: {}\nfiles: {3: {cb_nodes: 2}}\n"),
    case("apply", "t.yaml", says=("files", "has a control character"),
         t_yaml='settings: {}\nfiles: {"a\\nb": {cb_nodes: 2}}\n'),
    case("apply", "t.yaml", says=("files", "leading or trailing blanks"),
         t_yaml="settings: {}\nfiles: {' *.h5': {cb_nodes: 2}}\n"),
    case("apply", "t.yaml", says=("files.*.h5", "is not a mapping of setting: value"),
         t_yaml="settings: {}\nfiles: {'*.h5': [1]}\n"),
    case("apply", "t.yaml", says=("files.*.h5.cb_nodes", "positive integer"),
         t_yaml="settings: {}\nfiles: {'*.h5': {cb_nodes: 0}}\n"),
    case("apply", "t.yaml", says=("files.*.h5.nope", "unknown setting"),
         t_yaml="settings: {}\nfiles: {'*.h5': {nope: 1}}\n"),
    # config files
    case("run", "-c", "nothere.yaml", "--cores", "4", says=("nothere.yaml", "not found")),
    case("run", "-c", "bin.dat", "--cores", "4", says=("bin.dat", "not UTF-8")),
    case("status", "-c", "bad.yaml", says=("bad.yaml", "not UTF-8"),
         bad_yaml=b"system:\n  name: \xff\n"),
    case("status", "-c", "bad.yaml", says=("bad.yaml", "line 2"), bad_yaml="a: [\n"),
    case("status", "-c", "bad.yaml", says=("nope", "unknown key"), **config("nope: 1\n")),
    case("train", "-c", "bad.yaml", "--dry-run", says=("system.scratch", "file-system root"),
         **config("system: {scratch: /}\n" + GOOD_CONFIG)),
    case("train", "-c", "bad.yaml", "--dry-run", says=("system.scratch", "home directory"),
         **config("system: {scratch: /root}\n" + GOOD_CONFIG)),
    case("train", "-c", "bad.yaml", "--dry-run", says=("system.scratch",),
         **config("system: {scratch: /usr}\n" + GOOD_CONFIG)),
    case("train", "-c", "bad.yaml", "--dry-run", says=("train.repetitions", "limit of 1000"),
         **config("store: st.jsonl\nspace: {cb_nodes: [1, 2]}\n"
                  "train: {repetitions: 1000000000000000000, scales: [{cores: 2}]}\n")),
    case("train", "-c", "bad.yaml", "--dry-run", says=("train.scales[0].cores", "limit"),
         **config("store: st.jsonl\nspace: {cb_nodes: [1]}\n"
                  "train: {scales: [{cores: 99999999999999999999}]}\n")),
    case("train", "-c", "bad.yaml", "--dry-run", says=("train.scales[0]", "cb_nodes: 5"),
         **config("store: st.jsonl\nspace: {cb_nodes: 5}\ntrain: {scales: [{cores: 2}]}\n")),
    case("train", "-c", "bad.yaml", "--dry-run", says=("train", "limit of 1,000,000"),
         **config("store: st.jsonl\nspace: {cb_nodes: [1, 2]}\ntrain: {repetitions: 1000, "
                  "scales: [{cores: 2}, {cores: 4, design: lhs, runs: 999999}]}\n")),
    case("train", "-c", "bad.yaml", "--dry-run", says=("space", "limit of 100,000"),
         **config("store: st.jsonl\nspace: {cb_buffer_size: [" + ", ".join(
             str(2**16 * i) for i in range(1, 400)) + "], stripe_size: [" + ", ".join(
             str(2**16 * i) for i in range(1, 400)) + "]}\ntrain: {scales: [2]}\n")),
    case("train", "-c", "bad.yaml", "--dry-run", says=("kernel.args", "limit of 1TiB"),
         **config("store: st.jsonl\nkernel: {name: vpic, args: {particles_per_rank: "
                  "100000000000}}\nspace: {cb_nodes: [1]}\ntrain: {scales: [2]}\n")),
    case("train", "-c", "bad.yaml", "--dry-run",
         says=("kernel.args.particles_per_rank", "limit"),
         **config("store: st.jsonl\nkernel: {name: vpic, args: {particles_per_rank: "
                  + "1" + "0" * 40 + "}}\nspace: {cb_nodes: [1]}\ntrain: {scales: [2]}\n")),
    case("status", "-c", "bad.yaml", says=("tune.options.genetic", "population"),
         **config("tune: {options: {genetic: {population: -3}}}\n")),
    case("status", "-c", "bad.yaml", says=("tune.options.nope", "unknown strategy"),
         **config("tune: {options: {nope: {}}}\n")),
    case("status", "-c", "bad.yaml", says=("tune.repetitions", "limit of 1000"),
         **config("tune: {repetitions: 5000}\n")),
    case("status", "-c", "bad.yaml", says=("backend.replay_pick", "not one of"),
         **config("backend: {replay_pick: mean}\n")),
    case("status", "-c", "bad.yaml", says=("system.timeout",),
         **config("system: {timeout: forever}\n")),
    case("status", "-c", "bad.yaml", says=("system.env", "mapping"),
         **config("system: {env: [A, B]}\n")),
    case("status", "-c", "bad.yaml", says=("system.mpi_io", "not one of"),
         **config("system: {mpi_io: ompio}\n")),
    case("status", "-c", "bad.yaml", says=("kernel.args.nope", "unknown argument"),
         **config("kernel: {name: vpic, args: {nope: 1}}\n")),
    case("status", "-c", "bad.yaml", says=("space.stripe_size", "multiple of 64 KiB"),
         **config("space: {stripe_size: [1000]}\n")),
    case("status", "-c", "bad.yaml", says=("space.cb_nodes", "values repeat"),
         **config("space: {cb_nodes: [1, 1]}\n")),
    case("status", "-c", "bad.yaml", says=("schema_version", "not supported"),
         **config("schema_version: 9\n")),
    case("status", "-c", "bad.yaml", says=("train.scales", "list"),
         **config("train: {scales: 4}\n")),
    # run
    case("run", "--cores", "0", says=("'--cores'", "not in the range")),
    case("run", "--cores", "abc", says=("'--cores'", "'abc'")),
    case("run", "--cores", "99999999999999999999", says=("'--cores'", "1<=x<=16777216")),
    case("run", *SIM, "--cores", "4", "--set", "nope=1", says=("--set.nope", "unknown setting")),
    case("run", *SIM, "--cores", "4", "--set", "cb_nodes=abc",
         says=("--set.cb_nodes", "positive integer")),
    case("run", *SIM, "--cores", "4", "--set", "cb_nodes=99",
         says=("--set.cb_nodes", "exceed the 4 ranks")),
    case("run", *SIM, "--cores", "4", "--set", "stripe_size=1000",
         says=("--set.stripe_size", "multiple of 64 KiB")),
    case("run", *SIM, "--cores", "4", "--set", "romio_cb_write=maybe",
         says=("--set.romio_cb_write", "not one of")),
    case("run", *SIM, "--cores", "4", "--set", "cb_buffer_size=" + "9" * 23,
         says=("--set.cb_buffer_size", "limit")),
    case("run", *SIM, "--cores", "4", "--set", "cb_nodes", says=("--set", "NAME=VALUE")),
    case("run", *SIM, "--cores", "4", "--arg", "nope=1", says=("--arg.nope", "unknown argument")),
    case("run", *SIM, "--cores", "4", "--arg", "particles_per_rank=-5",
         says=("--arg.particles_per_rank", "positive integer")),
    case("run", *SIM, "--cores", "4", "--arg", "particles_per_rank=1" + "0" * 40,
         says=("--arg.particles_per_rank", "limit")),
    case("run", *SIM, "--cores", "4", "--arg", "particles_per_rank=100000000000",
         says=("--arg", "limit of 1TiB")),
    case("run", *SIM, "--cores", "4", "--store", "st.jsonl", "--no-store",
         says=("--store and --no-store", "give one")),
    case("run", "--backend", "sim", "--cores", "4", "--replay-data", "data.csv",
         says=("--replay-data", "only for the replay backend")),
    case("run", "--cores", "4", "--noise", "2", says=("--noise", "only for the sim backend")),
    case("run", "--cores", "4", "--system", "hopper", says=("--system", "only for the sim")),
    case("run", "--backend", "nope", "--cores", "4", says=("'--backend'", "'nope'")),
    case("run", "--kernel", "nope", "--cores", "4", says=("--kernel", "unknown kernel")),
    case("run", "--kernel", "vpic", "--command", "ls", "--cores", "4",
         says=("--kernel and --command", "give one")),
    # a command kernel's metric: its keys and values
    case("run", "--command", "ls", "--cores", "1", "--metric",
         "{regex: 'Max Write: ([0-9.]+)', unit: KB/s}",
         says=("--command.metric.unit", "'KB/s' is not one of s, MiB/s")),
    case("run", "--command", "ls", "--cores", "1", "--metric",
         "{regex: 'Max Write: ([0-9.]+)', match: middle}",
         says=("--command.metric.match", "'middle' is not one of last, first")),
    case("run", "--command", "ls", "--cores", "1", "--metric", "{regex: 'x: ([0-9.]+)', "
         "units: s}", says=("--command.metric.units", "unknown key of a metric")),
    case("run", "--command", "ls", "--cores", "1", "--metric", "{label: x}",
         says=("--command.metric.regex", "missing or not text")),
    case("run", "--command", "ls", "--cores", "1", "--metric", "{regex: [",
         says=("--command.metric", "YAML flow style")),
    case("train", "-c", "bad.yaml", "--dry-run", says=("kernel.metric.label", "control"),
         **config("kernel: {command: ls, metric: {regex: 'x: ([0-9.]+)', "
                  "label: \"a\\nb\"}}\n")),
    case("train", "-c", "bad.yaml", "--dry-run",
         says=("kernel.metric.unit", "only a regex metric has a unit"),
         **config("kernel: {command: ls, metric: wall, metric_unit: MiB/s}\n")),
    case("apply", "t.yaml", says=("metric.better", "'lower' is not 'higher'"),
         t_yaml="metric: {label: Max Write, unit: MiB/s, better: lower}\nsettings: {}\n"),
    case("apply", "t.yaml", says=("target_time", "is not one of"),
         t_yaml="target_time: Max Write\nmetric: {label: other, unit: s, better: lower}\n"
                "settings: {}\n"),
    case("run", *SIM, "--cores", "4", "--reps", "0", says=("'--reps'", "1<=x<=1000")),
    case("run", *SIM, "--cores", "4", "--reps", "100000", says=("'--reps'", "1<=x<=1000")),
    case("run", *SIM, "--cores", "4", "--bogus", says=("--bogus", "No such option")),
    # tune
    case("tune", "--cores", "0", says=("'--cores'", "not in the range")),
    case("tune", *SIM, "--cores", "512", "--option", "seed=abc", says=("--option seed", "'abc'")),
    case("tune", *SIM, "--cores", "512", "--strategy", "genetic", "--option", "population=-3",
         says=("--option population", "integer in [2, 100000]")),
    case("tune", *SIM, "--cores", "512", "--strategy", "genetic", "--option", "mutation=2",
         says=("--option mutation", "[0, 1]")),
    case("tune", *SIM, "--cores", "512", "--strategy", "tpe", "--option", "startup=x",
         says=("--option startup", "'auto'")),
    case("tune", *SIM, "--cores", "512", "--strategy", "model", "--option", "method=foo",
         says=("--option method", "sequential, paper")),
    case("tune", *SIM, "--cores", "512", "--option", "prior=0", says=("--option prior", "> 0")),
    case("tune", *SIM, "--cores", "512", "--strategy", "nope", says=("--strategy", "unknown")),
    case("tune", *SIM, "--cores", "512", "--option", "nope=1", says=("nope", "unknown option")),
    case("tune", *SIM, "--cores", "512", "--option", "x", says=("--option", "NAME=VALUE")),
    case("tune", *SIM, "--cores", "512", "--budget", "0", says=("'--budget'", "1<=x<=1000000")),
    case("tune", *SIM, "--cores", "512", "--budget", "99999999999",
         says=("'--budget'", "1<=x<=1000000")),
    case("tune", *SIM, "--cores", "512", "-o", "st.jsonl", says=("-o st.jsonl", "store")),
    case("tune", "-c", "good.yaml", "--cores", "2", "-o", "st.jsonl.lock",
         says=("-o st.jsonl.lock", "lock file")),
    case("tune", "-c", "good.yaml", "--cores", "2", "-o", "st.jsonl.claims",
         says=("-o st.jsonl.claims", "claims")),
    case("tune", "-c", "good.yaml", "--cores", "2", "-o", "good.yaml",
         says=("-o good.yaml", "config in use")),
    case("tune", *SIM, "--cores", "512", "-o", "data.csv", says=("-o data.csv", "--force")),
    case("tune", *SIM, "--cores", "512", "-o", "nodir/t.yaml", says=("nodir", "does not exist")),
    case("tune", *SIM, "--cores", "512", "--target", "nope", says=("'--target'", "'nope'")),
    case("tune", *SIM, "--cores", "512", "--kernel", "nope", says=("--kernel", "unknown kernel")),
    case("tune", "--backend", "sim", "--system", "nope", "--cores", "512",
         says=("system", "unknown system")),
    # replay data
    case("tune", "--backend", "replay", "--cores", "4", says=("backend.replay_data", "needs")),
    case("tune", "--backend", "replay", "--replay-data", "nothere.csv", "--cores", "4",
         says=("nothere.csv", "does not exist")),
    case("tune", "--backend", "replay", "--replay-data", "r.csv", "--cores", "4",
         says=("r.csv", "line 2", "cores 'abc'", "positive integer"),
         r_csv="cores,cb_nodes,write_time\nabc,1,2.0\n"),
    case("tune", "--backend", "replay", "--replay-data", "r.csv", "--cores", "4",
         says=("r.csv", "empty"), r_csv=""),
    case("tune", "--backend", "replay", "--replay-data", "r.csv", "--cores", "4",
         says=("r.csv", "not UTF-8"), r_csv=b"cores,cb_nodes,write_time\n4,1,\xff\n"),
    case("tune", "--backend", "replay", "--replay-data", "r.csv", "--cores", "4",
         says=("r.csv", "line 3", "write_time nan", "positive number"),
         r_csv="cores,cb_nodes,write_time\n4,,2.0\n4,2,nan\n"),
    case("tune", "--backend", "replay", "--replay-data", "r.csv", "--cores", "4",
         says=("r.csv", "line 3", "write_time -1", "positive number"),
         r_csv="cores,cb_nodes,write_time\n4,,2.0\n4,2,-1\n"),
    case("tune", "--backend", "replay", "--replay-data", "r.csv", "--cores", "4",
         says=("r.csv", "line 3", "positive number"),
         r_csv="cores,cb_nodes,write_time\n4,,2.0\n4,2,\n"),
    case("tune", "--backend", "replay", "--replay-data", "r.csv", "--cores", "4",
         says=("r.csv", "column 'cb_node'", "did you mean 'cb_nodes'"),
         r_csv="cores,cb_node,write_time\n4,1,2.0\n"),
    case("tune", "--backend", "replay", "--replay-data", "r.csv", "--cores", "4",
         says=("r.csv", "not valid CSV"), r_csv='cores,cb_nodes,write_time\n4,1,"2\n'),
    case("tune", "--backend", "replay", "--replay-data", "bin.dat", "--cores", "4",
         says=("bin.dat", "not an iotune store")),
    # train
    case("train", "-c", "good.yaml", "--dry-run", "--emit-sbatch", "f.sh",
         says=("--dry-run and --emit-sbatch", "give one")),
    case("train", "-c", "good.yaml", "--emit-sbatch", "st.jsonl",
         says=("--emit-sbatch st.jsonl", "store in use")),
    case("train", "-c", "good.yaml", "--emit-sbatch", "good.yaml",
         says=("--emit-sbatch good.yaml", "config in use")),
    case("train", "-c", "good.yaml", "--emit-sbatch", "data.csv",
         says=("--emit-sbatch data.csv", "--force")),
    case("train", "-c", "good.yaml", "--array", "3", says=("--array", "--emit-sbatch")),
    case("train", "-c", "good.yaml", "--lease", "1s", "--dry-run",
         says=("--lease", "shorter than 4 s")),
    case("train", "-c", "nothere.yaml", "--dry-run", says=("nothere.yaml", "not found")),
    # results, status, store
    case("results", "--store", "bin.dat", says=("bin.dat", "not an iotune store")),
    case("results", "--store", "st.jsonl", "--export", "st.jsonl",
         says=("--export st.jsonl", "store in use")),
    case("results", "--store", "st.jsonl", "--export", "nodir/x.csv",
         says=("nodir", "does not exist")),
    case("results", "--store", "st.jsonl", "--export", "good.yaml",
         says=("--export good.yaml", "--force")),
    case("results", "--store", "st.jsonl", "--format", "nope", says=("'--format'", "'nope'")),
    case("status", "-c", "nothere.yaml", says=("nothere.yaml", "not found")),
    case("store", "check", "--store", "bin.dat", says=("bin.dat", "not an iotune store")),
    case("states", "--store", "bin.dat", says=("bin.dat", "not an iotune store")),
    case("classify", "--store", "bin.dat", says=("bin.dat", "not an iotune store")),
    case("classify", "--folds", "1", says=("'--folds'", "x>=2")),
    # init, report, fit, predict
    case("init", "-o", "good.yaml", says=("good.yaml", "already exists")),
    case("init", "-o", "nodir/x.yaml", says=("nodir", "does not exist")),
    case("init", "-o", "new.yaml", "--command", "./prog", says=("--command",
                                                                "does not start with a launcher")),
    case("init", "-o", "new.yaml", "--command", "mpiexec ./prog",
         says=("--command", "does not give the ranks (-n N)")),
    case("init", "-o", "new.yaml", "--command", "mpiexec -n 0 ./prog",
         says=("--command", "-n '0' is not a positive whole number")),
    case("init", "-o", "new.yaml", "--command", "mpiexec -n 2 --bind-to core ./prog",
         says=("--command", "launcher option '--bind-to' is not understood")),
    case("init", "-o", "new.yaml", "--command", "srun -n 2",
         says=("--command", "names no program")),
    case("init", "-o", "new.yaml", "--command", "mpiexec -n 2 ./prog {nope}",
         says=("kernel.command", "placeholders are")),
    case("init", "-o", "good.yaml", "--command", "mpiexec -n 2 ./prog",
         says=("good.yaml", "already exists")),
    case("report", "--store", "st.jsonl", "-o", "st.jsonl", says=("-o st.jsonl", "store")),
    case("report", "--store", "st.jsonl", "-o", "/", says=("-o /", "file-system root")),
    case("report", "--store", "st.jsonl", "--tuned", "text.txt", "-o", "rep",
         says=("text.txt", "no 'settings' key")),
    case("fit", "nothere.csv", "--params", "cb_nodes", "--target", "write_time",
         says=("nothere.csv", "does not exist")),
    case("fit", "data.csv", "--params", "nope", "--target", "write_time",
         says=("column 'nope'", "not in the data")),
    case("fit", "bin.dat", "--params", "cb_nodes", "--target", "write_time",
         says=("bin.dat", "not UTF-8")),
    case("fit", "data.csv", "--params", "cb_nodes", "--target", "write_time", "-o", "st.jsonl",
         says=("-o st.jsonl", "--force")),
    case("fit", "data.csv", "--params", "cb_nodes", "--target", "write_time", "-o",
         "good.yaml", says=("-o good.yaml", "--force")),
    case("predict", "nothere.yaml", "data.csv", says=("nothere.yaml", "does not exist")),
    case("predict", "tuned.yaml", "data.csv", says=("tuned.yaml", "schema_version")),
    # variability and Darshan commands
    case("probe", "--interval", "abc", "--rounds", "1", says=("--interval", "not a duration")),
    case("probe", "--size", "huge", "--rounds", "1", says=("--size", "not a byte size")),
    case("probe", "--scratch", "/", "--rounds", "1", says=("--scratch", "file-system root")),
    case("placement", "--idle", "-1", says=("'--idle'", "0<=x<=65536")),
    case("placement", "--idle", "3", "--busy", "1", "--t-idle", "1",
         says=("--t-idle/--t-busy", "give both")),
    case("placement", "--idle", "3", "--busy", "1", "--t-idle", "1", "--t-busy", "2",
         "--total", "lots", says=("--total", "not a byte size")),
    case("profile", "nothere.darshan", says=("nothere.darshan", "no such file")),
    case("profile", "text.txt", says=("text.txt", "not a Darshan log")),
    case("match", "text.txt", says=("text.txt", "not a Darshan log")),
    case("phases", "text.txt", says=("text.txt", "not a Darshan log")),
    case("proxy", "text.txt", "-o", "p.yaml", says=("text.txt", "not a Darshan log")),
    case("proxy", "text.txt", "-o", "p.yaml", "--run-ranks", "0",
         says=("'--run-ranks'", "1<=x<=16777216")),
    case("proxy", "text.txt", "-o", "p.yaml", "--run", "--run-ranks", "two",
         says=("'--run-ranks'", "not a valid integer")),
    case("characterize", says=("'LOG'", "Missing argument")),
    case("estimate", "text.txt", "--characterization", "nothere.yaml",
         says=("nothere.yaml", "not found")),
    case("estimate", "text.txt", "--characterization", "bad.yaml",
         says=("bad.yaml", "malformed YAML"), bad_yaml=": : :\n"),
    case("bogus", says=("bogus", "No such command")),
    # production jobs
    case("job", "start", says=("'--tag'", "Missing option")),
    case("job", "start", "--tag", "x", says=("--job-id", "not in a Slurm job")),
    case("job", "start", "--tag", "a$b", "--job-id", "1", says=("--tag", "'a$b'")),
    case("job", "start", "--tag", "x", "--job-id", "1", "--candidate", "nothere.yaml",
         says=("nothere.yaml", "tuned file not found")),
    case("job", "start", "--tag", "x", "--job-id", "1", "--candidate", "text.txt",
         says=("text.txt", "no 'settings' key")),
    case("job", "start", "--tag", "x", "--job-id", "1", "--candidate", "t.yaml",
         says=("best_found.settings.cb_nodes", "positive integer"),
         t_yaml="recommendation: default\nsettings: {}\nbest_found: {settings: {cb_nodes: abc}}\n"),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "3",
         "--preload-report", "r.json", says=("--seconds", "one of the three")),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "3", "--files", "*.h5",
         says=("--files", "--preload-report, which is not given")),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--preload-report", "nothere.json",
         says=("nothere.json", "preload report not found")),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--preload-report", "text.txt",
         says=("text.txt", "not JSON")),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--preload-report", "r.json",
         says=("r.json", "not a report of iotune's preload library"), r_json="[1, 2]\n"),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--preload-report", "r.json",
         says=("r.json", "version 1", "no per-file times"),
         r_json='{"preload": "iotune", "version": 1, "files": []}\n'),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--preload-report", "r.json",
         "--files", "*.nc", says=("--files", "'*.nc' matches none", "'/o/a.h5'"),
         r_json='{"preload": "iotune", "version": 2, "files": [{"path": "/o/a.h5", '
                '"opened_by": "H5Fcreate", "open_s": 1.5, "opens": []}]}\n'),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "-1",
         says=("'--seconds'", "0<x<=31536000")),
    case("job", "finish", "--tag", "x", "--job-id", "99", "--seconds", "3",
         says=("--job-id", "was not started")),
    case("job", "status", "--tag", "x", "--store", "bin.dat",
         says=("bin.dat", "not an iotune store")),
    case("job", "status", "--tag", "x", "--tuned", "good.yaml",
         says=("--tuned good.yaml", "holds an iotune config, not a tuned configuration")),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "3", "--tuned",
         "text.txt", says=("--tuned text.txt", "not a tuned configuration")),
    case("job", "start", "--tag", "x", "--job-id", "1", "--format", "h5py",
         says=("'--format'", "'h5py' is not one of")),
    case("results", "--store", "prod.jsonl", "--kernel", "vpic",
         says=("--kernel", "is a production journal"), prod_jsonl=PRODUCTION_JOB),
    case("report", "--store", "prod.jsonl", "-o", "rep", "--kernel", "vpic",
         says=("--kernel", "is a production journal"), prod_jsonl=PRODUCTION_JOB),
    # store paths: named pipes, devices, symbolic links, missing directories
    *[case(*args, "--store", "pipe.jsonl", fifos=("pipe.jsonl",),
           says=("store pipe.jsonl", "is a named pipe (FIFO), not a regular file"))
      for args in (JOB_START, JOB_FINISH, ("job", "status", "--tag", "x"),
                   ("store", "check"), ("store", "check", "--repair"),
                   ("run", *SIM, "--cores", "4"), ("results",), ("report", "-o", "rep"),
                   ("states",), ("probe", "--simulate", "hopper", "--rounds", "1"))],
    *[case(*args, fifos=("pipe.jsonl",), bad_yaml=GOOD_CONFIG.replace("st.jsonl", "pipe.jsonl"),
           says=("pipe.jsonl", "is a named pipe (FIFO), not a regular file"))
      for args in (("train", "-c", "bad.yaml", "--dry-run"), ("train", "-c", "bad.yaml"),
                   ("tune", "-c", "bad.yaml", "--cores", "2"))],
    case(*JOB_START, "--store", "/dev/null", says=("store /dev/null", "is a character device")),
    case("store", "check", "--repair", "--store", "/dev/null",
         says=("store /dev/null", "is a character device")),
    case(*JOB_START, "--store", "link.jsonl", fifos=("pipe",), links={"link.jsonl": "pipe"},
         says=("store link.jsonl (the file ", "pipe)", "is a named pipe (FIFO)")),
    case("store", "check", "--repair", "--store", "loop.jsonl",
         links={"loop.jsonl": "loop.jsonl"},
         says=("store loop.jsonl", "its symbolic links form a loop")),
    *[case(*args, "--store", "nodir/p.jsonl",
           says=("store nodir/p.jsonl", "directory nodir does not exist",
                 "not the directories above it"))
      for args in (JOB_START, JOB_FINISH, ("store", "check", "--repair"),
                   ("run", *SIM, "--cores", "4"),
                   ("probe", "--simulate", "hopper", "--rounds", "1"))],
    *[case(*args, bad_yaml=GOOD_CONFIG.replace("st.jsonl", "nodir/p.jsonl"),
           says=("nodir/p.jsonl", "nodir does not exist"))
      for args in (("train", "-c", "bad.yaml", "--dry-run"), ("train", "-c", "bad.yaml"),
                   ("tune", "-c", "bad.yaml", "--cores", "2"))],
    case(*JOB_START, "--store", "nodir/newstore", says=("store nodir/newstore",
                                                         "directory nodir does not exist")),
    case(*JOB_START, "--store", "link.jsonl", links={"link.jsonl": "nodir/p.jsonl"},
         says=("store link.jsonl (the file ", "nodir does not exist")),
    case(*JOB_START, "--store", "text.txt/p.jsonl",
         says=("store text.txt/p.jsonl", "is not a directory")),
    # untrusted YAML and input files: nesting, aliases, size, special files
    case("apply", "t.yaml", says=("t.yaml", "best_found", "nested deeper than 64 levels"),
         t_yaml=TUNED_HEAD + "best_found: " + "[" * 100_000 + "\n"),
    case("apply", "t.yaml", says=("t.yaml", "best_found.a.a.a", "nested deeper than 64"),
         t_yaml=TUNED_HEAD + "best_found: " + "{a: " * 50_000 + "\n"),
    case("job", "start", "--tag", "x", "--job-id", "1", "--candidate", "t.yaml",
         says=("t.yaml", "best_found.a.a.a", "nested deeper than 64"),
         t_yaml=TUNED_HEAD + "best_found:\n" + "".join(" " * n + "a:\n" for n in range(1, 1000))),
    case("results", "-c", "t.yaml", says=("t.yaml", "best_found.a.a.a", "nested deeper than 64"),
         t_yaml=TUNED_HEAD + "best_found:\n" + "".join(" " * n + "a:\n" for n in range(1, 1000))),
    case("apply", "t.yaml", says=("t.yaml", "tuned file is", "over the limit of 4 MiB"),
         t_yaml=TUNED_HEAD + "best_found:\n" + "".join(" " * n + "a:\n" for n in range(1, 3000))),
    case("apply", "t.yaml", says=("t.yaml", "measured.l", "more than 100000 values"),
         t_yaml=TUNED_HEAD + BILLION_LAUGHS.format(key="measured")),
    case("job", "start", "--tag", "x", "--job-id", "1", "--candidate", "t.yaml",
         says=("t.yaml", "settings.l", "more than 100000 values"),
         t_yaml="kernel: vpic\ncores: 4\n" + BILLION_LAUGHS.format(key="settings")),
    case("results", "-c", "t.yaml", says=("t.yaml", "measured.l", "more than 100000 values"),
         t_yaml=TUNED_HEAD + BILLION_LAUGHS.format(key="measured")),
    case("apply", "t.yaml", says=("t.yaml", "alias *a inside its own anchor"),
         t_yaml=TUNED_HEAD + "measured: &a {again: *a}\n"),
    case("apply", "t.yaml", says=("t.yaml", f"tuned file is {len(BIG_TUNED)} bytes",
                                  "over the limit of 4 MiB"), t_yaml=BIG_TUNED),
    case("job", "start", "--tag", "x", "--job-id", "1", "--candidate", "t.yaml",
         says=("t.yaml", "tuned file is", "over the limit of 4 MiB"), t_yaml=BIG_TUNED),
    case("results", "-c", "c.yaml", says=("c.yaml", f"config file is {len(BIG_CONFIG)} bytes",
                                          "over the limit of 4 MiB"), c_yaml=BIG_CONFIG),
    case("apply", "fifo.yaml", says=("fifo.yaml", "is a named pipe (FIFO)",
                                     "a tuned file must be a regular file"),
         fifos=("fifo.yaml",)),
    case("job", "start", "--tag", "x", "--job-id", "1", "--candidate", "fifo.yaml",
         says=("fifo.yaml", "is a named pipe (FIFO)", "a tuned file must be a regular file"),
         fifos=("fifo.yaml",)),
    case("results", "-c", "fifo.yaml", says=("fifo.yaml", "is a named pipe (FIFO)",
                                            "a config file must be a regular file"),
         fifos=("fifo.yaml",)),
    case("apply", "/dev/zero", says=("/dev/zero", "is a character device")),
    case("tune", "--backend", "replay", "--replay-data", "f.csv", "--cores", "4",
         says=("f.csv", "is a named pipe (FIFO)", "a replay file must be a regular file"),
         fifos=("f.csv",)),
    case("fit", "f.csv", "--params", "cb_nodes", "--target", "write_time", "-o", "m.yaml",
         says=("f.csv", "is a named pipe (FIFO)", "a CSV file must be"), fifos=("f.csv",)),
    case("predict", "f.yaml", "data.csv", says=("f.yaml", "is a named pipe (FIFO)",
                                               "a model file must be"), fifos=("f.yaml",)),
    case("run", *SIM[:2], "--system", "f.yaml", "--cores", "4",
         says=("system: f.yaml", "is a named pipe (FIFO)", "a system file must be"),
         fifos=("f.yaml",)),
    case("profile", "f.darshan", says=("f.darshan", "is a named pipe (FIFO)",
                                       "a Darshan log must be"), fifos=("f.darshan",)),
    case("phases", "f.darshan", says=("f.darshan", "is a named pipe (FIFO)"),
         fifos=("f.darshan",)),
    case("estimate", "text.txt", "--characterization", "f.yaml",
         says=("f.yaml", "is a named pipe (FIFO)"), fifos=("f.yaml",)),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--preload-report", "f.json",
         says=("f.json", "is a named pipe (FIFO)", "a preload report must be"),
         fifos=("f.json",)),
    case("run", "--command", "ls", "--cores", "1", "--metric", "{a: " * 50_000,
         says=("--command.metric", "nested deeper than 64 levels")),
    case("run", "--command", "ls", "--cores", "1", "--metric",
         "{regex: 'x: ([0-9.]+)', " + ", ".join(LAUGHS) + "}",
         says=("--command.metric", "more than 100000 values")),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--preload-report", "r.json",
         says=("r.json", "JSON nested too deeply"), r_json="[" * 100_000 + "\n"),
    case("fit", "f.parquet", "--params", "cb_nodes", "--target", "write_time", "-o", "m.yaml",
         says=("f.parquet", "is a named pipe (FIFO)", "a Parquet file must be"),
         fifos=("f.parquet",)),
    # numbers: nan, inf and values past the limits, on flags and config fields
    case("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "1e20",
         says=("'--seconds'", "above the limit of 31536000")),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "inf",
         says=("'--seconds'", "not a finite number")),
    case("job", "finish", "--tag", "x", "--job-id", "1", "--seconds", "nan",
         says=("'--seconds'", "not a finite number")),
    case("train", "-c", "bad.yaml", "--dry-run", says=("system.timeout", "not a finite number"),
         **config("system: {timeout: .nan}\n" + GOOD_CONFIG)),
    case("train", "-c", "bad.yaml", "--dry-run", says=("system.timeout", "not a finite number"),
         **config("system: {timeout: .inf}\n" + GOOD_CONFIG)),
    case("train", "-c", "bad.yaml", "--dry-run",
         says=("system.timeout", "above the limit of 31536000 s"),
         **config("system: {timeout: 1.0e+20}\n" + GOOD_CONFIG)),
    case("train", "-c", "bad.yaml", "--dry-run",
         says=("system.timeout", "above the limit of 31536000 s"),
         **config("system: {timeout: " + "9" * 400 + "d}\n" + GOOD_CONFIG)),
    case("status", "-c", "bad.yaml", says=("backend.noise", "not a finite number"),
         **config("backend: {name: sim, noise: .nan}\n")),
    case("status", "-c", "bad.yaml", says=("backend.noise", "not a finite number"),
         **config("backend: {name: sim, noise: .inf}\n")),
    case("status", "-c", "bad.yaml", says=("backend.noise", "above the limit of 10"),
         **config("backend: {name: sim, noise: 11}\n")),
    case("status", "-c", "bad.yaml", says=("system.ost_count", "above the limit of 65536"),
         **config("system: {ost_count: 100000000000000000000}\n")),
    case("status", "-c", "bad.yaml", says=("system.cores_per_node", "above the limit"),
         **config("system: {cores_per_node: 100000000000000000000}\n")),
    case("status", "-c", "bad.yaml", says=("system.aggregators_per_node", "not a finite"),
         **config("system: {aggregators_per_node: .inf}\n")),
    case("status", "-c", "bad.yaml", says=("tune.busy_repeats", "above the limit of 1000"),
         **config("tune: {busy_repeats: 100000000000000000000}\n")),
    case("status", "-c", "bad.yaml", says=("tune.min_idle", "above the limit of 1000"),
         **config("tune: {min_idle: 5000}\n")),
    case("status", "-c", "bad.yaml", says=("tune.seed", "above the limit"),
         **config("tune: {seed: 100000000000000000000}\n")),
    case("status", "-c", "bad.yaml", says=("tune.options.portfolio", "members", "[1, 1000]"),
         **config("tune: {options: {portfolio: {members: 100000000000000000000}}}\n")),
    case("status", "-c", "bad.yaml", says=("tune.options.genetic", "mutation", "[0, 1]"),
         **config("tune: {options: {genetic: {mutation: .nan}}}\n")),
    case("report", "--store", "st.jsonl", "-o", "rep", "--top", "1e20",
         says=("'--top'", "not a valid integer")),
    case("report", "--store", "st.jsonl", "-o", "rep", "--top", "1" + "0" * 20,
         says=("'--top'", "above the limit of 100,000")),
    case("report", "--store", "st.jsonl", "-o", "rep", "--folds", "1" + "0" * 20,
         says=("'--folds'", "above the limit")),
    case("status", "-c", "good.yaml", "--watch", "nan", says=("'--watch'", "not a finite number")),
    case("status", "-c", "good.yaml", "--watch", "1e20",
         says=("'--watch'", "above the limit of 31536000")),
    case("status", "-c", "good.yaml", "--watch", "0", says=("'--watch'", "0<x<=31536000")),
    case("probe", "--simulate", "hopper", "--targets", "1e20", "--store", "p.jsonl",
         says=("'--targets'", "not a valid integer")),
    case("probe", "--simulate", "hopper", "--targets", "1" + "0" * 20, "--store", "p.jsonl",
         says=("'--targets'", "above the limit of 65,536")),
    case("probe", "--simulate", "hopper", "--seed", "-1", "--store", "p.jsonl",
         says=("'--seed'", "x>=0")),
    case("probe", "--simulate", "hopper", "--noise", "nan", "--store", "p.jsonl",
         says=("'--noise'", "not a finite number")),
    case("probe", "--simulate", "hopper", "--rounds", "1" + "0" * 20, "--store", "p.jsonl",
         says=("'--rounds'", "above the limit of 1,000,000")),
    case("probe", "--simulate", "hopper", "--interval", "1s", "--duration", "300d", "--store",
         "p.jsonl", says=("--duration/--interval", "above the limit of 1,000,000")),
    case("probe", "--simulate", "hopper", "--rounds", "1000000", "--targets", "100", "--store",
         "p.jsonl", says=("--targets", "simulated latencies", "limit of 10,000,000")),
    case("probe", "--simulate", "hopper", "--interval", "9" * 400, "--store", "p.jsonl",
         says=("--interval", "above the limit of 31536000 s")),
    case("train", "-c", "good.yaml", "--noise", "nan", says=("'--noise'", "not a finite number")),
    case("train", "-c", "good.yaml", "--noise", "inf", "--dry-run",
         says=("'--noise'", "not a finite number")),
    case("train", "-c", "good.yaml", "--noise", "11", "--dry-run",
         says=("'--noise'", "above the limit of 10")),
    case("train", "-c", "good.yaml", "--lease", "9" * 30 + "d", "--dry-run",
         says=("--lease", "above the limit of 31536000 s")),
    case("train", "-c", "good.yaml", "--emit-sbatch", "z.sh", "--array", "1" + "0" * 20,
         says=("'--array'", "above the limit of 1,000")),
    case("run", *SIM, "--cores", "4", "--noise", "1e300", says=("'--noise'", "above the limit")),
    case("run", *SIM, "--cores", "4", "--noise", "-inf", says=("'--noise'", "not a finite")),
    case("tune", *SIM, "--cores", "512", "--noise", "nan", says=("'--noise'", "not a finite")),
    case("tune", *SIM, "--cores", "512", "--option", "members=" + "9" * 29,
         says=("--option members", "[1, 1000]")),
    case("tune", *SIM, "--cores", "512", "--option", "seed=" + "9" * 29,
         says=("--option seed", "above the limit")),
    case("tune", *SIM, "--cores", "512", "--option", "kappa=inf",
         says=("--option kappa", "is not a number >= 0")),
    case("results", "--store", "st.jsonl", "--cores", "-5", says=("'--cores'", "1<=x<=16777216")),
    case("classify", "--train-fraction", "nan", says=("'--train-fraction'", "not a finite")),
    case("classify", "--horizon", "1" + "0" * 20, says=("'--horizon'", "above the limit")),
    case("classify", "--window", "9" * 400, says=("--window", "above the limit of 31536000 s")),
    case("placement", "--idle", "3", "--busy", "1", "--t-idle", "nan", "--t-busy", "2",
         says=("'--t-idle'", "not a finite number")),
    case("placement", "--idle", "3", "--busy", "1", "--t-idle", "1", "--t-busy", "inf",
         says=("'--t-busy'", "not a finite number")),
    case("placement", "--idle", "1" + "0" * 20, "--busy", "1", "--t-idle", "1", "--t-busy",
         "2", says=("'--idle'", "above the limit of 65,536")),
    case("fit", "data.csv", "--params", "cb_nodes", "--target", "write_time", "--min-gain",
         "nan", says=("'--min-gain'", "not a finite number")),
    case("fit", "data.csv", "--params", "cb_nodes", "--target", "write_time", "--seed", "-1",
         says=("'--seed'", "x>=0")),
    case("profile", "text.txt", "--threshold", "nan", says=("'--threshold'", "not a finite")),
    case("match", "text.txt", "--class", "-1", says=("'--class'", "x>=0")),
    case("proxy", "text.txt", "-o", "p.yaml", "--min-similarity", "nan",
         says=("'--min-similarity'", "not a finite number")),
    case("phases", "text.txt", "--gap", "inf", says=("'--gap'", "not a finite number")),
    case("characterize", "text.txt", "-o", "c.yaml", "--repeat", "1000000",
         says=("'--repeat'", "above the limit of 1,000")),
    case("estimate", "text.txt", "--characterization", "c.yaml", "--measured", "nan",
         says=("'--measured'", "not a finite number")),
    case("run", "--backend", "sim", "--system", "p.yaml", "--cores", "4",
         says=("system.ost_count", "above the limit of 65536"),
         p_yaml=HOPPER.replace("\nost_count: 156 ", "\nost_count: 100000000000000000000 ")),
    case("run", "--backend", "sim", "--system", "p.yaml", "--cores", "4",
         says=("system.noise.busy_sigma", "above the limit of 2"),
         p_yaml=HOPPER.replace("busy_sigma: 0.3", "busy_sigma: 1.0e+300")),
    case("run", "--backend", "sim", "--system", "p.yaml", "--cores", "4",
         says=("system.ost_bandwidth_mib_s", "not a finite number"),
         p_yaml=HOPPER.replace("ost_bandwidth_mib_s: 309.1", "ost_bandwidth_mib_s: .inf")),
    case("run", *SIM, "--kernel", "p.yaml", "--cores", "4",
         says=("p.yaml: ranks", "above the limit of 16777216"),
         p_yaml="schema_version: 1\nkernel: vpic\nargs: {}\nranks: 100000000000000000000\n"),
    case("run", *SIM, "--kernel", "p.yaml", "--cores", "4", says=("p.yaml: ranks", "finite"),
         p_yaml="schema_version: 1\nkernel: vpic\nargs: {}\nranks: .inf\n"),
    case("train", "-c", "bad.yaml", says=("backend.noise", "not a finite number"),
         **config(GOOD_CONFIG.replace("{name: sim}", "{name: sim, noise: .nan}"))),
    case("train", "-c", "bad.yaml", says=("system.timeout", "not a finite number"),
         **config("system: {timeout: .nan}\n" + GOOD_CONFIG)),
    # job scripts and printed shell lines: Slurm values, --dir expansions, job lines
    *(case(*command, "--emit-sbatch", "z.sh", flag, value, says=(flag, rule))
      for command in (("train", "-c", "good.yaml"), ("tune", *SIM, "--cores", "4"))
      for flag, value, rule in (
          ("--partition", "x\ntouch pwned\nexit 0", "not a Slurm name"),
          ("--partition", "$(touch pwned)", "not a Slurm name"),
          ("--partition", "a b", "not a Slurm name"),
          ("--partition", "-x", "not a Slurm name"),
          ("--partition", "p" * 65, "1-64 letters"),
          ("--account", "$(touch pwned)", "not a Slurm name"),
          ("--account", "`touch pwned`", "not a Slurm name"),
          ("--account", "x#y", "not a Slurm name"),
          ("--account", "\u202ex", "not a Slurm name"),
          ("--time", "100000000000000000000", "not a Slurm time limit"),
          ("--time", "0", "above 0"),
          ("--time", "366-0", "at most 365 days"),
          ("--time", "1:00\ntouch pwned", "not a Slurm time limit"),
          ("--time", "nan", "not a Slurm time limit"),
          ("--time", "-5", "not a Slurm time limit"))),
    case("train", "-c", "good.yaml", "--emit-sbatch", "z.sh", "--array", "100000000000000000000",
         says=("'--array'", "1<=x<=1000")),
    case("train", "-c", "good.yaml", "--emit-sbatch", "z.sh", "--array", "1001",
         says=("'--array'", "1<=x<=1000")),
    case("train", "-c", "good.yaml", "--partition", "debug", says=("--partition",
                                                                   "give --emit-sbatch")),
    case("tune", *SIM, "--cores", "4", "--time", "10", says=("--time", "give --emit-sbatch")),
    case("train", "-c", "good.yaml", "--emit-sbatch", "z\n.sh",
         says=("--emit-sbatch", "control character")),
    case("tune", *SIM, "--cores", "4", "--emit-sbatch", "z.sh", "-o", "t\n.yaml",
         says=("-o", "control character")),
    case("tune", "-c", "good.yaml", "--cores", "2", "--emit-sbatch", "st.jsonl",
         says=("--emit-sbatch st.jsonl", "store in use")),
    case("tune", *SIM, "--cores", "4", "--emit-sbatch", "good.yaml", "-c", "good.yaml",
         says=("--emit-sbatch good.yaml", "config in use")),
    case("tune", *SIM, "--cores", "4", "-o", "t.yaml", "--emit-sbatch", "t.yaml",
         says=("--emit-sbatch t.yaml", "tuned file (-o)")),
    case("tune", *SIM, "--cores", "4", "--emit-sbatch", "data.csv",
         says=("--emit-sbatch data.csv", "--force")),
    case("tune", *SIM, "--cores", "4", "--strategy", "exhaustive", "--emit-sbatch", "z.sh",
         says=("--emit-sbatch", "give --time or --budget")),
    *(case("apply", "tuned.yaml", "--dir", value, says=("--dir", rule))
      for value, rule in (
          ("${X@P}", "is not $NAME or ${NAME}"), ("${!X}", "is not $NAME or ${NAME}"),
          ("${X:-$(touch pwned)}", "is not $NAME or ${NAME}"),
          ("$((1+1))", "is not $NAME or ${NAME}"), ("$1", "is not $NAME or ${NAME}"),
          ('"$(touch pwned)"', "is not $NAME or ${NAME}"),
          ('"`touch pwned`"', "inside double quotes"), ("`touch pwned`", "outside quotes"),
          ("x;touch pwned", "outside quotes"), ("a b", "outside quotes"),
          ("~/out", "outside quotes"), ("*", "outside quotes"), ("a\\b", "outside quotes"),
          ("'unclosed", "unclosed quote"), ('"$X', "unclosed quote"), ("", "is empty"),
          ("x\ntouch pwned", "control character"), ("x\u2028y", "control character"))),
    case("apply", "t.yaml", "--dir", "${X@P}", says=("--dir", "is not $NAME or ${NAME}"),
         t_yaml="kernel: vpic\ncores: 4\nsettings: {}\n"),
    case("job", "start", "--tag", "$(touch pwned)", "--job-id", "1",
         says=("--tag", "1-128 letters")),
    case("job", "start", "--tag", "x", "--job-id", "1;touch pwned",
         says=("--job-id", "1-128 letters")),
    case("job", "start", "--tag", "x\ntouch pwned", "--job-id", "1",
         says=("--tag", "1-128 letters")),
    case("apply", "tuned.yaml", "--dir", "-1", says=("--dir", "starts with '-'", "./-1")),
    case("apply", "tuned.yaml", "--dir", "x" * 5000, says=("--dir", "PATH_MAX")),
    case("tune", *SIM, "--cores", "4", "--emit-sbatch", "z.sh", "-o", "x" * 300,
         says=("-o", "cannot be a file here", "File name too long")),
    case("train", "-c", "good.yaml", "--emit-sbatch", "x" * 300,
         says=("--emit-sbatch", "cannot be a file here")),
    case("tune", *SIM, "--cores", "4", "--budget", "999999", "--emit-sbatch", "z.sh",
         says=("--emit-sbatch", "estimated time, 1042 days", "above", "--time")),
    case("report", "--store", "st.jsonl", "-o", "x" * 300,
         says=("-o", "cannot be a directory here", "File name too long")),
    # tuned files: per-file settings as an ordered list of {pattern, settings}
    case("apply", "t.yaml", says=("files", "is not a list of {pattern: GLOB, settings"),
         t_yaml="settings: {}\nfiles: 3\n"),
    case("apply", "t.yaml", says=("files[0].setting", "unknown key of a files: entry"),
         t_yaml="settings: {}\nfiles: [{pattern: '*.h5', setting: {}}]\n"),
    case("apply", "t.yaml", says=("files[0]", "no 'pattern'"),
         t_yaml="settings: {}\nfiles: [{settings: {cb_nodes: 2}}]\n"),
    case("apply", "t.yaml", says=("files", "'*' is given twice"),
         t_yaml="settings: {}\nfiles: [{pattern: '*'}, {pattern: '*', settings: {}}]\n"),
    case("apply", "t.yaml", says=("files.*.h5", "is not a mapping of setting: value"),
         t_yaml="settings: {}\nfiles: [{pattern: '*.h5', settings: [1]}]\n"),
    # production campaigns: a job's time limit
    case("job", "start", "--tag", "x", "--job-id", "1", "--time-limit", "2h",
         says=("--time-limit", "'2h'", "sbatch --time's forms")),
    case("job", "start", "--tag", "x", "--job-id", "1", "--time-limit", "0",
         says=("--time-limit", "'0'", "above 0")),
    case("job", "start", "--tag", "x", "--job-id", "1", "--time-limit", "UNLIMITED",
         "--store", "prod.jsonl", prod_jsonl=PRODUCTION_JOB,
         says=("--time-limit", "'UNLIMITED'", "above 0")),
    # doctor: its options and its config
    case("doctor", "--ranks", "1", says=("'--ranks'", "1 is not in the range 2<=x<=1024")),
    case("doctor", "--ranks", "4096", says=("'--ranks'", "4096 is above the limit of 1,024")),
    case("doctor", "--ranks", "two", says=("'--ranks'", "'two' is not a valid integer")),
    case("doctor", "--launcher", "aprun", says=("'--launcher'", "'aprun' is not one of")),
    case("doctor", "-c", "nothere.yaml", says=("nothere.yaml", "not found")),
    case("doctor", "-c", "bad.yaml", says=("system.launcher", "unknown launcher 'nope'"),
         **config("system: {launcher: nope}\n")),
    case("doctor", "-c", "bad.yaml", says=("system.mpi_io", "is not one of"),
         **config("system: {mpi_io: ompio}\n")),
    # knowledge: build, show, check (a knowledge base is data only; a failed build
    # leaves no file behind)
    case("knowledge", "build", "-o", "kb.duckdb", says=("Missing argument", "SOURCES")),
    case("knowledge", "build", "data.csv", says=("Missing option", "-o")),
    case("knowledge", "build", "nothere.csv", "-o", "kb.duckdb",
         says=("nothere.csv", "does not exist")),
    case("knowledge", "build", "data.csv", "-o", "kb.duckdb",
         says=("data.csv", "no workload sidecar", "data.workload.yaml")),
    case("knowledge", "build", "text.txt", "-o", "kb.duckdb",
         says=("text.txt", "not a .csv landscape")),
    case("knowledge", "build", "p.jsonl", "-o", "kb.duckdb", fifos=("p.jsonl",),
         says=("p.jsonl", "not a regular file")),
    case("knowledge", "build", "d.csv", "-o", "nodir/kb.duckdb", **landscape(),
         says=("-o", "nodir", "does not exist")),
    case("knowledge", "build", "d.csv", "-o", "text.txt", **landscape(),
         says=("-o", "text.txt", "not a knowledge base")),
    case("knowledge", "build", "d.csv", "-o", "good.yaml", **landscape(),
         says=("-o", "good.yaml", "not a knowledge base")),
    case("knowledge", "build", "d.csv", "-o", ".", **landscape(), says=("is a directory",)),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape(sidecar="file_system: lustre\n"),
         says=("d.workload.yaml", "system", "missing")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape(sidecar=KB_SIDECAR + "byte_per_rank: 4\n"),
         says=("'byte_per_rank'", "not a workload sidecar key", "bytes_per_rank")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape(sidecar=KB_SIDECAR + "ranks: -4\n"),
         says=("ranks", "-4", "positive integer")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape(sidecar=KB_SIDECAR + "ranks: true\n"), says=("ranks", "True", "positive")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape(sidecar="system: cori\noperation: append\n"),
         says=("operation", "'append'", "one of write, read")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape(sidecar=KB_SIDECAR + "mpi: [1, 2]\n"), says=("mpi", "not a non-empty text")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb", **landscape(sidecar="[1, 2]\n"),
         says=("d.workload.yaml", "is a mapping")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb", **landscape(sidecar="system: [\n"),
         says=("d.workload.yaml", "malformed YAML")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape("cores,cb_nodez,write_time\n4,1,2.0\n"),
         says=("d.csv", "'cb_nodez'", "not a setting")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape("cores,cb_nodes,write_time\n4,1,-2.0\n"),
         says=("d.csv", "line 2", "write_time", "positive number")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape("cores,cb_nodes,write_time\n4,0,2.0\n"), says=("cb_nodes", "line 2")),
    case("knowledge", "build", "d.csv", "-o", "kb.duckdb",
         **landscape("cores,cb_nodes,write_time\n8,1,2.0\n", KB_SIDECAR + "ranks: 4\n"),
         says=("cores 8", "sidecar's ranks 4")),
    case("knowledge", "build", "text.jsonl", "-o", "kb.duckdb", text_jsonl="hello\n",
         says=("text.jsonl", "not an iotune store")),
    case("knowledge", "build", "data.csv", "-o", "kb.duckdb", "--nope",
         says=("No such option", "--nope")),
    case("knowledge", "show", "nothere.kb", says=("nothere.kb", "knowledge base not found")),
    case("knowledge", "show", "text.txt", says=("text.txt", "not a knowledge base")),
    case("knowledge", "show", ".", says=("is a directory", "not a knowledge base")),
    case("knowledge", "show", "bin.dat", says=("bin.dat", "not a knowledge base")),
    case("knowledge", "show", "st.jsonl", says=("st.jsonl", "not a knowledge base")),
    case("knowledge", "show", "nothere.kb", "--system", " ", says=("--system", "empty")),
    case("knowledge", "check", "nothere.kb", says=("nothere.kb", "knowledge base not found")),
    case("knowledge", "check", "p.kb", fifos=("p.kb",), says=("p.kb", "not a regular file")),
    case("knowledge", "check", "s.kb", s_kb=b"SQLite format 3\x00" + bytes(4080),
         says=("s.kb", "not a knowledge base")),
    case("knowledge", "check", "d.kb", d_kb=bytes(8) + b"DUCK" + bytes(4084) * 3,
         says=("d.kb", "knowledge base")),
    case("knowledge", "check", "good.yaml", says=("good.yaml", "not a knowledge base")),
    case("knowledge", "check", says=("Missing argument", "BASE")),
    # a knowledge base for a tune (--knowledge, tune.knowledge, IOTUNE_KNOWLEDGE) and for
    # a production campaign (job start --knowledge --workload)
    case("tune", *SIM, "--cores", "4", "--knowledge", "nothere.kb",
         says=("--knowledge", "nothere.kb", "no such file", "'none'")),
    case("tune", *SIM, "--cores", "4", "--knowledge", "", says=("--knowledge", "empty")),
    case("tune", *SIM, "--cores", "4", "--knowledge", ".", says=("--knowledge", "not a file")),
    case("tune", *SIM, "--cores", "4", "--knowledge", "text.txt", says="text.txt"),
    case("tune", *SIM, "--cores", "4", "--knowledge", "bin.dat", says="bin.dat"),
    case("tune", "-c", "bad.yaml", "--cores", "4",
         says=("tune.knowledge", "is not a non-empty string"),
         **config("backend: {name: sim}\ntune: {knowledge: 3}\n")),
    case("tune", "-c", "bad.yaml", "--cores", "4", says=("tune.knowledge", "no such file"),
         **config("backend: {name: sim}\ntune: {knowledge: nothere.kb}\n")),
    Case(("tune", *SIM, "--cores", "4"), ("IOTUNE_KNOWLEDGE", "nothere.kb", "no such file"),
         env={"IOTUNE_KNOWLEDGE": "nothere.kb"}),
    Case(("tune", *SIM, "--cores", "4", "--knowledge", "gone.kb"),
         ("--knowledge", "gone.kb"), env={"IOTUNE_KNOWLEDGE": "none"}),
    case(*JOB_START, "--knowledge", "nothere.kb", says=("--knowledge", "needs --workload")),
    case(*JOB_START, "--workload", "w.yaml", says=("--workload", "--knowledge")),
    case(*JOB_START, "--knowledge", "k.kb", "--workload", "w.yaml", "--candidate",
         "tuned.yaml", says=("--knowledge", "not both")),
    case(*JOB_START, "--knowledge", "nothere.kb", "--workload", "w.yaml",
         says=("--knowledge", "no such file")),
    case(*JOB_START, "--knowledge", "bin.dat", "--workload", "w.yaml", says="bin.dat",
         w_yaml="system: cori\n"),
    case(*JOB_START, "--knowledge", "bin.dat", "--workload", "w.yaml",
         says=("w.yaml", "'sytem'"), w_yaml="sytem: cori\n"),
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with a store of two simulated records, a config, a tuned file, a replay
    CSV, a text file and a binary file."""
    base = tmp_path_factory.mktemp("workspace")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(base)
        result = invoke("run", *SIM, "--cores", "128", "--store", "st.jsonl", "--reps", "2")
        assert result.exit_code == 0, result.output
    shutil.rmtree(base / "st.jsonl.cache", ignore_errors=True)
    (base / "good.yaml").write_text(GOOD_CONFIG)
    (base / "tuned.yaml").write_text(GOOD_TUNED)
    (base / "data.csv").write_text(GOOD_CSV)
    (base / "text.txt").write_text("hello\n")
    (base / "bin.dat").write_bytes(b"\x00\xff\xfe" * 50)
    return base


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every entry under ``root`` by relative path, the store's derived cache left out: a
    regular file's bytes, a link's target, the kind of anything else (never opened)."""
    entries = {}
    for p in sorted(root.rglob("*")):
        if any(part.endswith(".cache") for part in p.relative_to(root).parts):
            continue
        if p.is_symlink():
            entries[str(p.relative_to(root))] = b"link to " + os.readlink(p).encode()
        elif p.is_file():
            entries[str(p.relative_to(root))] = p.read_bytes()
        else:
            entries[str(p.relative_to(root))] = b"directory" if p.is_dir() else b"special"
    return entries


def test_the_table_covers_every_command() -> None:
    from iotune.cli.main import all_commands

    assert len(CASES) >= 100
    covered = {c.args[0] for c in CASES}
    assert set(all_commands()) - covered == set()


@pytest.mark.parametrize("bad", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_and_changes_nothing(bad: Case, workspace: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    here = tmp_path / "w"
    shutil.copytree(workspace, here)
    for name, body in bad.files.items():
        (here / name).write_bytes(body if isinstance(body, bytes) else body.encode())
    for name in bad.fifos:
        os.mkfifo(here / name)
    for name, target in bad.links.items():
        (here / name).symlink_to(target)
    monkeypatch.chdir(here)
    isolate(monkeypatch, tmp_path / "xdg")
    for variable, value in bad.env.items():
        monkeypatch.setenv(variable, value)
    before = _snapshot(here)
    if bad.fifos:
        with within(PIPE_SECONDS, f"iotune {bad.id}"):
            result = invoke(*bad.args)
    else:
        result = invoke(*bad.args)
    assert result.exit_code != 0, result.output
    line = error_line(result)
    for fragment in bad.says:
        assert fragment in line, f"{fragment!r} not in {line!r}"
    assert _snapshot(here) == before
