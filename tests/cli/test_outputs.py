"""No command writes over data it did not create: outputs refuse the store, its side files
and the config in use, replace a file of another kind only with --force, write atomically,
and system directories are never scratch or an output directory."""

import os
from pathlib import Path

import pytest
import yaml

from iotune.cli.common import in_use
from iotune.config import load_config
from iotune.errors import ConfigError
from iotune.execution.outputs import (
    atomic_write,
    check_output_dir,
    check_output_file,
    file_kind,
    system_directory,
)
from tests.cli_result import error_line, invoke

SIM = ("--backend", "sim", "--system", "hopper")
TUNE = ("tune", *SIM, "--kernel", "vpic", "--cores", "8", "--strategy", "random",
        "--budget", "3", "--no-color")


@pytest.fixture
def work(bare):
    """A working directory with one simulated run in ./iotune-store.jsonl, no config."""
    assert invoke("run", *SIM, "--cores", "4").exit_code == 0
    assert (bare / "iotune-store.jsonl").stat().st_size > 0
    return bare


def refused(args: tuple[str, ...], target: Path, *words: str) -> str:
    """Run ``iotune ARGS``; assert one error line naming ``target`` and ``words``, exit 2,
    and ``target`` byte-identical; return the line."""
    before = target.read_bytes() if target.is_file() else None
    result = invoke(*args)
    line = error_line(result)
    assert result.exit_code == 2, result.output
    assert target.name in line and all(w in line for w in words), line
    if before is not None:
        assert target.read_bytes() == before
    return line


def no_temporaries(directory: Path) -> None:
    assert not [p.name for p in directory.iterdir() if ".tmp-" in p.name]


# The data-loss cases of the issue.

def test_tune_o_onto_the_store_is_refused_before_anything_runs(work):
    store = work / "iotune-store.jsonl"
    refused((*TUNE, "-o", "iotune-store.jsonl"), store, "is the store in use")
    refused((*TUNE, "-o", "iotune-store.jsonl", "--force"), store, "never replaces it")


def test_emit_sbatch_onto_the_store_is_refused(work):
    store = work / "iotune-store.jsonl"
    refused(("train", *SIM, "--emit-sbatch", "iotune-store.jsonl", "--force"), store,
            "is the store in use")


def test_export_onto_the_store_is_refused_whatever_its_name(work):
    store = work / "iotune-store.jsonl"
    refused(("results", "--store", str(store), "--export", str(store)), store,
            "is the store in use")
    as_csv = work / "runs.csv"  # a journal named .csv: the export's own suffix
    as_csv.write_bytes(store.read_bytes())
    refused(("results", "--store", "runs.csv", "--export", "runs.csv", "--force"), as_csv,
            "is the store in use")


def test_outputs_refuse_the_store_side_files(work):
    # by name: whether they exist yet (a small store has no cache) does not matter
    for side, what in [("iotune-store.jsonl.lock", "lock file"),
                       ("iotune-store.jsonl.claims", "claims file"),
                       ("iotune-store.jsonl.cache", "cache directory")]:
        line = error_line(invoke(*TUNE, "-o", side, "--force"))
        assert side in line and what in line, line
    inside = work / "iotune-store.jsonl.cache" / "x.csv"
    line = error_line(invoke("results", "--export", str(inside), "--force"))
    assert "the store's cache directory" in line


def test_tune_o_onto_the_config_in_use_is_refused(work):
    assert invoke("init").exit_code == 0
    config = work / "iotune.yaml"
    refused((*TUNE, "-o", "iotune.yaml", "--force"), config, "is the config in use")
    assert load_config(config).kernel.name == "vpic"  # still loads: nothing replaced it


def test_export_into_a_missing_directory_is_one_line(work):
    line = refused(("results", "--export", "nodir/x.csv"), work / "nodir" / "x.csv",
                   "does not exist")
    assert line.startswith("--export nodir/x.csv: ")
    assert not (work / "nodir").exists()


def test_an_output_onto_a_directory_is_refused(work):
    (work / "out").mkdir()
    line = error_line(invoke(*TUNE, "-o", "out"))
    assert line == "-o out: is a directory; give the path of a file"


# Kinds: another kind needs --force, the same kind is replaced.

def test_replacing_another_kind_needs_force_and_works_with_it(work):
    script = work / "job.sh"
    script.write_text("#!/bin/bash\nsrun ./app\n")
    refused((*TUNE, "-o", "job.sh"), script, "holds a script, not a tuned configuration",
            "--force")
    store_before = (work / "iotune-store.jsonl").read_bytes()
    result = invoke(*TUNE, "-o", "job.sh", "--force")
    assert result.exit_code == 0, result.output
    tuned = yaml.safe_load(script.read_text())
    assert tuned["kernel"] == "vpic" and tuned["cores"] == 8
    assert file_kind(script) == "tuned"
    assert (work / "iotune-store.jsonl").read_bytes() != store_before  # the tune ran
    no_temporaries(work)


def test_a_tuned_file_replaces_an_earlier_tuned_file(work):
    old = work / "tuned.yaml"
    old.write_text("kernel: vpic\ncores: 8\nsettings: {cb_nodes: 2}\n")
    assert file_kind(old) == "tuned"
    result = invoke(*TUNE, "-o", "tuned.yaml")
    assert result.exit_code == 0, result.output
    assert "iotune_version" in yaml.safe_load(old.read_text())
    no_temporaries(work)


def test_emit_sbatch_replaces_a_script_but_not_a_config(work, tmp_path):
    for name in ("mine.yaml", "other.yaml"):
        assert invoke("init", "-o", name).exit_code == 0
    train = ("train", "-c", "mine.yaml", *SIM)
    refused((*train, "--emit-sbatch", "mine.yaml", "--force"), work / "mine.yaml",
            "is the config in use")
    refused((*train, "--emit-sbatch", "other.yaml"), work / "other.yaml",
            "holds an iotune config, not a script", "--force")
    line = error_line(invoke("train", *SIM, "--emit-sbatch", "t.sbatch"))
    assert line.startswith("--emit-sbatch t.sbatch: the job script runs") and "-c" in line
    script = work / "train.sbatch"
    for _ in range(2):
        result = invoke(*train, "--emit-sbatch", "train.sbatch")
        assert result.exit_code == 0, result.output
    assert script.read_text().startswith("#!/bin/bash")
    assert os.access(script, os.X_OK)
    no_temporaries(work)


def test_export_csv_refuses_a_config_and_replaces_an_earlier_export(work):
    assert invoke("init", "-o", "cfg.csv").exit_code == 0  # a config with a .csv name
    refused(("results", "--export", "cfg.csv"), work / "cfg.csv",
            "holds an iotune config, not CSV")
    for _ in range(2):
        result = invoke("results", "--export", "runs.csv")
        assert result.exit_code == 0, result.output
    assert (work / "runs.csv").read_text().splitlines()[0].startswith("id,recorded_at,")
    assert file_kind(work / "runs.csv") == "csv"
    no_temporaries(work)


def test_init_never_replaces_the_store_and_asks_for_force_otherwise(work):
    store = work / "iotune-store.jsonl"
    refused(("init", "-o", "iotune-store.jsonl", "--force"), store, "is the store in use")
    tuned = work / "tuned.yaml"
    tuned.write_text("kernel: vpic\ncores: 8\nsettings: {cb_nodes: 2}\n")
    refused(("init", "-o", "tuned.yaml"), tuned, "already exists; pass --force")


def test_fit_and_predict_never_write_over_their_data(work, tmp_path):
    store = work / "iotune-store.jsonl"
    refused(("fit", str(store), "--params", "cb_nodes", "--target", "write_time", "-o",
             str(store), "--force"), store, "is the store in use")
    data = work / "data.csv"
    data.write_text("c,t\n1,2.0\n2,1.0\n4,0.6\n8,0.5\n")
    model = work / "m.yaml"
    result = invoke("fit", str(data), "--params", "c", "--target", "t", "--max-terms", "2",
                    "-o", str(model))
    assert result.exit_code == 0, result.output
    assert file_kind(model) == "model"
    refused(("predict", str(model), str(data), "-o", str(data), "--force"), data,
            "is the data")
    refused(("predict", str(model), str(data), "-o", str(model), "--force"), model,
            "is the model")


def test_report_refuses_the_store_and_a_foreign_directory(work):
    store = work / "iotune-store.jsonl"
    refused(("report", "-o", "iotune-store.jsonl"), store, "is the store in use")
    foreign = work / "papers"
    foreign.mkdir()
    (foreign / "draft.tex").write_text("x")
    line = error_line(invoke("report", "-o", "papers"))
    assert "holds files and is not an earlier output" in line and "--force" in line
    assert [p.name for p in foreign.iterdir()] == ["draft.tex"]


# The library functions themselves.

@pytest.mark.parametrize(("text", "kind"), [
    ('{"schema_version": 1, "kernel": "vpic"}\n{"schema_version": 1}\n', "store"),
    ('{"event": "claim"}\n{"event": "done"}\n', "jsonl"),
    ('{\n  "kernel": "vpic"\n}\n', "json"),
    ("# a config\nsystem: {name: x}\nspace: {cb_nodes: [1, 2]}\n", "config"),
    ("kernel: vpic\ncores: 4\nsettings: {}\n", "tuned"),
    ("schema_version: 1\nkind: iotune-model\nterms: []\n", "model"),
    ("schema_version: 1\nkernel: ior\nargs: {}\nranks: 4\nsimilarity: 0.9\n", "proxy"),
    ("source_log: a.darshan\npatterns: []\n", "characterization"),
    ("#!/bin/bash\necho hi\n", "script"),
    ("a,b\n1,2\n", "csv"),
    ("<!DOCTYPE html>\n<html></html>\n", "html"),
    ("title: notes\n", "yaml"),
    ("just some words\n", "text"),
    ("  \n", None),
])
def test_file_kind_tells_the_kinds_apart(tmp_path, text, kind):
    path = tmp_path / "f"
    path.write_text(text)
    assert file_kind(path) == kind


def test_file_kind_of_binary_and_parquet(tmp_path):
    (tmp_path / "b").write_bytes(b"\x00\x01\xff" * 10)
    (tmp_path / "p").write_bytes(b"PAR1" + b"\x00" * 20)
    (tmp_path / "l").write_bytes(b"caf\xe9 au lait\n")  # Latin-1, not UTF-8
    assert [file_kind(tmp_path / n) for n in "bpl"] == ["binary", "parquet", "binary"]


def test_atomic_write_keeps_the_old_file_whole_when_writing_fails(tmp_path):
    path = tmp_path / "tuned.yaml"
    path.write_text("old\n")

    def half(tmp: Path) -> None:
        tmp.write_text("half of the new")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        atomic_write(path, half)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["tuned.yaml"]
    assert atomic_write(path, lambda tmp: tmp.write_text("new\n")) == 4
    assert path.read_text() == "new\n"
    atomic_write(path, b"bytes\n", mode=0o750)
    assert path.read_bytes() == b"bytes\n" and path.stat().st_mode & 0o777 == 0o750


def test_in_use_follows_symbolic_links(tmp_path):
    store = tmp_path / "st.jsonl"
    store.write_text('{"schema_version": 1}\n')
    (tmp_path / "link.yaml").symlink_to(store)
    guard = in_use(None, store=store)
    with pytest.raises(ConfigError, match=r"^-o .*link.yaml: is the store in use"):
        check_output_file(tmp_path / "link.yaml", "tuned", option="-o", in_use=guard,
                          force=True)
    store_dir = tmp_path / "stdir"
    guard = in_use(None, store=store_dir)
    assert guard.what(store_dir / "measurements.jsonl") == "the store in use"
    assert guard.what(store_dir / "measurements.jsonl.cache" / "v1.seg") == \
        "the store's cache directory"
    assert guard.what(store_dir / "tuned.yaml") is None


def test_output_dir_rules(tmp_path):
    report = tmp_path / "report"
    assert check_output_dir(report, option="-o", marker="manifest.json") == report
    report.mkdir()
    (report / "manifest.json").write_text("{}")
    (report / "index.html").write_text("<html>")
    assert check_output_dir(report, option="-o", marker="manifest.json") == report
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="holds files and is not an earlier output"):
        check_output_dir(tmp_path, option="-o", marker="manifest.json")
    assert check_output_dir(tmp_path, option="-o", marker="manifest.json", force=True)
    with pytest.raises(ConfigError, match="is a file, not a directory"):
        check_output_dir(tmp_path / "notes.txt", option="-o", marker="manifest.json")
    for root in ("/", "/usr", "/etc", os.path.expanduser("~"), "/tmp"):
        with pytest.raises(ConfigError, match=r"^-o /.*: is "):
            check_output_dir(root, option="-o", marker="manifest.json", force=True)


# Item 6: system directories are never scratch.

@pytest.mark.parametrize("scratch", ["/", "$HOME", "~", "/root", "/home/alice", "/usr",
                                     "/etc", "/var", "/proc", "/usr/local", "/home"])
def test_a_system_directory_is_refused_as_scratch_at_load(write_config, monkeypatch,
                                                         tmp_path, scratch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    path = write_config({"system": {"scratch": scratch}})
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith("system.scratch: ") and "not /, a home directory" in message


def test_below_a_system_directory_scratch_is_fine(write_config, monkeypatch, tmp_path):
    home = tmp_path / "home"
    (home / "scratch").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    config = load_config(write_config({"system": {"scratch": "$HOME/scratch"}}))
    assert config.system.scratch == home / "scratch"
    tmp = load_config(write_config({"system": {"scratch": "/tmp"}}))  # runs make subdirs
    assert tmp.system.scratch == Path("/tmp")
    assert system_directory("/home/alice/run") is None
    assert system_directory("/dev/shm") is None


def test_a_scratch_option_refuses_a_system_directory(work):
    store = work / "iotune-store.jsonl"
    before = store.read_bytes()
    result = invoke("probe", "--scratch", "/etc", "--rounds", "1")
    assert result.exit_code == 2
    assert error_line(result).startswith("--scratch: /etc is a system directory")
    assert store.read_bytes() == before


def test_scratch_root_is_refused_through_the_cli_before_any_run(write_config, tmp_path):
    path = write_config({"system": {"scratch": "/"}})
    store = tmp_path / "store.jsonl"
    result = invoke("run", "-c", str(path), "--backend", "sim", "--cores", "4")
    assert result.exit_code == 2
    assert error_line(result).startswith("system.scratch: / is the file-system root")
    assert not store.exists()  # refused at load, before the store was opened


@pytest.mark.parametrize("command", ["proxy", "characterize"])
def test_darshan_outputs_never_replace_their_log(work, command):
    log = work / "app.darshan"
    log.write_bytes(b"\x00darshan log bytes")
    refused((command, "app.darshan", "-o", "app.darshan", "--force"), log,
            "is the Darshan log")
