"""Every command, given bad input, answers in one line and changes nothing.

Each case runs one command in a copy of a small workspace (a store with two simulated
records, a config, a tuned file, a replay CSV) and checks: a non-zero exit, no traceback,
exactly one ``iotune: error:`` line holding the fragments given (the key or value and the
rule), and every file of the workspace byte-identical afterwards (the store's cache, which
a reader may bring up to date, is derived and not compared).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cli_result import error_line, invoke

SIM = ("--backend", "sim", "--system", "hopper")
GOOD_CONFIG = ("store: st.jsonl\nbackend: {name: sim}\nspace: {cb_nodes: [1, 2]}\n"
               "train: {scales: [{cores: 2}]}\n")
GOOD_TUNED = "kernel: vpic\ncores: 4\nsettings: {cb_nodes: 2}\n"
#: A production journal's one line: job 1 of campaign x started.
PRODUCTION_JOB = ('{"kind": "production_job", "event": "start", "tag": "x", "job_id": "1", '
                  '"config": "default", "settings": {}, "role": "baseline", "schema_version": 1, '
                  '"id": "0123456789abcdef0123456789abcdef", '
                  '"recorded_at": "2026-01-01T00:00:00+00:00"}\n')
GOOD_CSV = "cores,cb_nodes,write_time\n4,,2.0\n4,1,1.5\n4,2,1.0\n4,,2.1\n"


@dataclass(frozen=True)
class Case:
    """``iotune ARGS`` in the workspace with ``files`` added; the error line must hold
    every one of ``says``."""

    args: tuple[str, ...]
    says: tuple[str, ...]
    files: dict[str, str | bytes] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return " ".join(self.args)[:80]


def case(*args: str, says: str | tuple[str, ...], **files: str | bytes) -> Case:
    """A case; ``files`` are named with ``_`` for ``.`` (``bad_yaml`` is ``bad.yaml``)."""
    named = {name.replace("_", ".", 1): body for name, body in files.items()}
    return Case(tuple(args), (says,) if isinstance(says, str) else says, named)


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
    case("apply", "t.yaml", says=("files", "is not a mapping of file glob: settings"),
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
         says=("--option population", "integer >= 2")),
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
    case("placement", "--idle", "-1", says=("'--idle'", "x>=0")),
    case("placement", "--idle", "3", "--busy", "1", "--t-idle", "0",
         says=("--t-idle/--t-busy", "give both")),
    case("placement", "--idle", "3", "--busy", "1", "--t-idle", "1", "--t-busy", "2",
         "--total", "lots", says=("--total", "not a byte size")),
    case("profile", "nothere.darshan", says=("nothere.darshan", "no such file")),
    case("profile", "text.txt", says=("text.txt", "not a Darshan log")),
    case("match", "text.txt", says=("text.txt", "not a Darshan log")),
    case("phases", "text.txt", says=("text.txt", "not a Darshan log")),
    case("proxy", "text.txt", "-o", "p.yaml", says=("text.txt", "not a Darshan log")),
    case("proxy", "text.txt", "-o", "p.yaml", "--run-ranks", "0",
         says=("'--run-ranks'", "x>=1")),
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
         says=("--seconds", "positive number")),
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
    # doctor: its options and its config
    case("doctor", "--ranks", "1", says=("'--ranks'", "1 is not in the range 2<=x<=1024")),
    case("doctor", "--ranks", "4096", says=("'--ranks'", "4096 is not in the range")),
    case("doctor", "--ranks", "two", says=("'--ranks'", "'two' is not a valid integer")),
    case("doctor", "--launcher", "aprun", says=("'--launcher'", "'aprun' is not one of")),
    case("doctor", "-c", "nothere.yaml", says=("nothere.yaml", "not found")),
    case("doctor", "-c", "bad.yaml", says=("system.launcher", "unknown launcher 'nope'"),
         **config("system: {launcher: nope}\n")),
    case("doctor", "-c", "bad.yaml", says=("system.mpi_io", "is not one of"),
         **config("system: {mpi_io: ompio}\n")),
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
    """Every file under ``root`` by relative path, the store's derived cache left out."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not any(part.endswith(".cache") for part in p.parts)}


def test_the_table_covers_every_command() -> None:
    from iotune.cli.main import cli

    assert len(CASES) >= 100
    covered = {c.args[0] for c in CASES}
    assert set(cli.commands) - covered == set()


@pytest.mark.parametrize("bad", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_and_changes_nothing(bad: Case, workspace: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    here = tmp_path / "w"
    shutil.copytree(workspace, here)
    for name, body in bad.files.items():
        (here / name).write_bytes(body if isinstance(body, bytes) else body.encode())
    monkeypatch.chdir(here)
    monkeypatch.delenv("IOTUNE_CONFIG", raising=False)
    for variable in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    before = _snapshot(here)
    result = invoke(*bad.args)
    assert result.exit_code != 0, result.output
    line = error_line(result)
    for fragment in bad.says:
        assert fragment in line, f"{fragment!r} not in {line!r}"
    assert _snapshot(here) == before
