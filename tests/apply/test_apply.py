import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from iotune.apply import load_tuned, render
from iotune.cli.main import cli
from iotune.errors import ConfigError

TUNED = {
    "schema_version": 1, "kernel": "vpic", "cores": 2048, "provenance": "measured",
    "settings": {"stripe_count": 64, "stripe_size": "8MiB", "cb_nodes": 64,
                 "romio_cb_write": "enable", "alignment": "1MiB"},
}


def _tuned(tmp_path, doc=TUNED):
    path = tmp_path / "tuned.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _run_lines(lines: str, cwd, *extra: str) -> str:
    """Run job-script lines in bash (as a job script would, with set -eu) in ``cwd``."""
    script = "set -eu\n" + lines + "\n" + "\n".join(extra) + "\n"
    out = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _library(tmp_path):
    """A stand-in for the preload library's file (the lines only check that it exists)."""
    path = tmp_path / "libiotune_preload-test.so"
    path.write_text("")
    return path


def test_every_format(tmp_path):
    tuned = load_tuned(_tuned(tmp_path))
    assert ('lfs setstripe -c 64 -S 8388608 "${OUTPUT_DIR:?set OUTPUT_DIR to the directory '
            'the program writes to}"') in render(tuned, "lustre")
    romio = render(tuned, "romio")
    # The program's launch gets the variable; the job script itself does not.
    shown = _run_lines(romio, tmp_path, "iotune_run printenv ROMIO_HINTS",
                       'echo "after: ${ROMIO_HINTS-unset}"')
    assert shown.splitlines() == [str(tmp_path / "iotune-romio-hints"), "after: unset"]
    assert sorted((tmp_path / "iotune-romio-hints").read_text().splitlines()) == [
        "cb_nodes 64", "romio_cb_write enable", "striping_factor 64", "striping_unit 8388608"]
    assert ("MPICH_MPIIO_HINTS='*:cb_nodes=64:romio_cb_write=enable:striping_factor=64:"
            "striping_unit=8388608' \"$@\"; }") in render(tuned, "cray")
    assert " IOR_HINT__MPI__cb_nodes=64 " in render(tuned, "ior")
    h5 = render(tuned, "h5py")
    assert "info.Set('cb_nodes', '64')" in h5
    assert "fapl.set_alignment(1, 1048576)" in h5
    preload = render(tuned, "preload", library=_library(tmp_path))
    (tmp_path / "sub").mkdir()
    shown = _run_lines(preload, tmp_path, "cd sub",  # the files are found from anywhere
                       "iotune_run printenv IOTUNE_SETTINGS LD_PRELOAD",
                       'echo "after: ${IOTUNE_SETTINGS-unset} ${LD_PRELOAD-unset}"')
    assert shown.splitlines() == [str(tmp_path / "iotune-preload-settings"),
                                  str(_library(tmp_path)), "after: unset unset"]
    body = (tmp_path / "iotune-preload-settings").read_text().splitlines()
    assert "hint:cb_nodes=64" in body and "hdf5:alignment=1048576" in body
    assert "export" not in preload


@pytest.mark.parametrize("fmt", ["auto", "all", "lustre", "romio", "cray", "ior", "preload",
                                 "h5py"])
def test_every_format_parses(tmp_path, fmt):
    lines = render(load_tuned(_tuned(tmp_path)), fmt, library=_library(tmp_path))
    if fmt == "h5py":  # Python for the program's own code
        compile(lines, "h5py-lines", "exec")
        return
    check = subprocess.run(["bash", "-n", "-c", lines], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def _fake_lfs(tmp_path):
    """A directory holding an ``lfs`` that records its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    lfs = bin_dir / "lfs"
    lfs.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'lfs-calls'}\n")
    lfs.chmod(0o755)
    return bin_dir


def _job(tmp_path, lines, env_extra, path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\nset -euo pipefail\n" + lines + "\necho job-ran\n")
    env = {"PATH": path, "HOME": str(tmp_path), **env_extra}
    return subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)


def test_all_runs_as_printed_in_a_strict_job_script_without_lustre(tmp_path):
    lines = render(load_tuned(_tuned(tmp_path)), "all", library=_library(tmp_path))
    out = _job(tmp_path, lines, {"OUTPUT_DIR": str(tmp_path / "out")}, "/usr/bin:/bin")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "job-ran"
    assert "iotune: no lfs command (not a Lustre system): striping not applied" in out.stderr
    assert (tmp_path / "iotune-romio-hints").read_text().count("\n") == 4
    assert "hdf5:alignment=1048576" in (tmp_path / "iotune-preload-settings").read_text()


def test_lustre_lines_stripe_the_output_directory_where_lfs_exists(tmp_path):
    lines = render(load_tuned(_tuned(tmp_path)), "lustre")
    out = _job(tmp_path, lines, {"OUTPUT_DIR": str(tmp_path / "out")},
               f"{_fake_lfs(tmp_path)}:/usr/bin:/bin")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "out").is_dir()
    assert (tmp_path / "lfs-calls").read_text() == f"setstripe -c 64 -S 8388608 {tmp_path}/out\n"


def test_an_unset_output_directory_fails_the_job_in_one_line(tmp_path):
    lines = render(load_tuned(_tuned(tmp_path)), "lustre")
    out = _job(tmp_path, lines, {}, f"{_fake_lfs(tmp_path)}:/usr/bin:/bin")
    assert out.returncode != 0 and "job-ran" not in out.stdout
    assert "OUTPUT_DIR: set OUTPUT_DIR to the directory the program writes to" in out.stderr


def test_a_missing_preload_library_fails_the_job_in_one_line(tmp_path):
    gone = tmp_path / "gone" / "libiotune_preload.so"
    lines = render(load_tuned(_tuned(tmp_path)), "preload", library=gone)
    out = _job(tmp_path, lines, {}, "/usr/bin:/bin")
    assert out.returncode == 1 and "job-ran" not in out.stdout
    assert out.stderr.strip().splitlines() == [
        f"iotune: the preload library {gone} is missing; rebuild it with: "
        f"{sys.executable} -m iotune.preload"]


def test_apply_resolves_the_preload_library_to_an_absolute_path(tmp_path):
    out = CliRunner().invoke(cli, ["apply", str(_tuned(tmp_path)), "--format", "preload"])
    assert out.exit_code == 0, out.output
    line = next(x for x in out.output.splitlines() if x.startswith("iotune_run()"))
    library = line.split("LD_PRELOAD=", 1)[1].split('"', 1)[0]
    assert library.startswith("/") and Path(library).is_file()


#: Values that would run a command if pasted into a job script unquoted or into a
#: here-document: a newline, command substitution both ways, quotes, the end marker.
HOSTILE = ["enable\ntouch PWNED", "$(touch PWNED)", "`touch PWNED`", "x'; touch PWNED; '",
           'x"; touch PWNED; "', "EOF\ntouch PWNED\nEOF", "a b", "x;touch PWNED"]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("name", ["hint.romio_no_indep_rw", "cb_config_list"])
def test_a_tuned_file_with_a_value_that_could_reach_a_shell_is_refused(tmp_path, name,
                                                                       value):
    doc = dict(TUNED, settings={"cb_nodes": 4, name: value})
    out = CliRunner().invoke(cli, ["apply", str(_tuned(tmp_path, doc))])
    assert out.exit_code == 2
    assert f"settings.{name}: value " in out.output
    assert "has characters a setting cannot carry" in out.output
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1
    assert not (tmp_path / "PWNED").exists()


def test_a_hint_key_with_shell_syntax_is_refused(tmp_path):
    doc = dict(TUNED, settings={"hint.x$(touch PWNED)": "1"})
    out = CliRunner().invoke(cli, ["apply", str(_tuned(tmp_path, doc))])
    assert out.exit_code == 2 and "hint key 'x$(touch PWNED)' has characters" in out.output


@pytest.mark.parametrize("fmt", ["romio", "cray", "ior", "preload"])
def test_rendered_lines_quote_every_value_even_unchecked_ones(tmp_path, fmt):
    """Defence in depth: lines built from values that bypassed the checks still run no
    command, and carry the value literally; a value with a newline is refused instead
    where it would reach one printed line."""
    for value in HOSTILE:
        tuned = {"settings": {"cb_nodes": 4, "hint.odd": value}, "kernel": "vpic",
                 "cores": 4, "provenance": "measured"}
        try:
            lines = render(tuned, fmt)
        except ConfigError as exc:
            assert "\n" in value and str(exc).startswith("settings: ")
            assert "has a control character ('\\n')" in str(exc)
            continue
        check = subprocess.run(["bash", "-n", "-c", lines], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        _run_lines(lines, tmp_path, "iotune_run true")
        assert not (tmp_path / "PWNED").exists()
        written = {"romio": "iotune-romio-hints", "preload": "iotune-preload-settings"}
        if fmt in written and "\n" not in value:
            assert value in (tmp_path / written[fmt]).read_text()


def test_apply_cli(tmp_path):
    out = CliRunner().invoke(cli, ["apply", str(_tuned(tmp_path)), "--format", "cray"])
    assert out.exit_code == 0, out.output
    assert out.output.count("MPICH_MPIIO_HINTS='") == 1


def _env_words(lines: str) -> list[str]:
    """The variable names the printed ``iotune_run`` gives the program."""
    body = next(x for x in lines.splitlines() if x.startswith("iotune_run()"))
    return [w.split("=", 1)[0] for w in body.split("{ ", 1)[1].split() if "=" in w]


@pytest.mark.parametrize(("flavour", "names", "why"), [
    ("mpich", ["ROMIO_HINTS"], "# MPICH (mpiexec --version) reads MPI-IO hints from the "
                               "ROMIO_HINTS file; --format all prints every mechanism"),
    ("openmpi", ["ROMIO_HINTS", "OMPI_MCA_io"], "# Open MPI (mpiexec --version) reads the "
     "ROMIO_HINTS file in its ROMIO layer, selected for the program (OMPIO ignores hints)"),
    ("unknown", ["ROMIO_HINTS", "MPICH_MPIIO_HINTS"], "# MPI not identified"),
])
def test_auto_prints_the_mechanism_the_mpi_in_use_reads(tmp_path, flavour, names, why):
    doc = dict(TUNED, settings={"cb_nodes": 4, "romio_cb_write": "disable"})
    lines = render(load_tuned(_tuned(tmp_path, doc)), "auto", flavour=flavour)
    assert _env_words(lines) == names
    assert lines.splitlines()[1].startswith(why)
    assert "lfs" not in lines and "IOR_HINT" not in lines  # no striping tuned, not IOR
    shown = _run_lines(lines, tmp_path, "iotune_run printenv ROMIO_HINTS")
    assert shown.strip() == str(tmp_path / "iotune-romio-hints")


def test_auto_adds_striping_ior_variables_and_the_preload_library_where_they_apply(tmp_path):
    tuned = load_tuned(_tuned(tmp_path, dict(TUNED, kernel="ior")))
    lines = render(tuned, "auto", library=_library(tmp_path), flavour="mpich")
    assert "lfs setstripe -c 64 -S 8388608" in lines  # stripe_count tuned
    words = _env_words(lines)
    assert words[0] == "ROMIO_HINTS" and words[-2:] == ["IOTUNE_SETTINGS", "LD_PRELOAD"]
    assert sorted(words[1:-2]) == ["IOR_HINT__MPI__cb_nodes", "IOR_HINT__MPI__romio_cb_write",
                                   "IOR_HINT__MPI__striping_factor",
                                   "IOR_HINT__MPI__striping_unit"]
    assert "IOR_HINT__MPI__ variables, read by IOR" in lines.splitlines()[1]
    program = {"settings": {"cb_nodes": 2}, "kernel": "command",
               "kernel_args": {"command": "./app", "preload": "no"}}
    assert _env_words(render(program, "auto", flavour="mpich")) == ["ROMIO_HINTS"]
    program["kernel_args"] = {"command": "./app", "preload": "auto"}
    assert _env_words(render(program, "auto", library=_library(tmp_path),
                             flavour="mpich")) == ["ROMIO_HINTS", "IOTUNE_SETTINGS",
                                                   "LD_PRELOAD"]


def test_apply_detects_the_mpi_and_prints_the_default_as_a_launch_unchanged(tmp_path):
    from iotune.execution.launchers import detect_mpi_flavour

    doc = dict(TUNED, settings={"cb_nodes": 4})
    out = CliRunner().invoke(cli, ["apply", str(_tuned(tmp_path, doc))])
    assert out.exit_code == 0, out.output
    expected = {"mpich": "# MPICH", "openmpi": "# Open MPI", "unknown": "# MPI not identified"}
    assert out.stdout.splitlines()[1].startswith(expected[detect_mpi_flavour()])
    default = dict(TUNED, settings={}, recommendation="default")
    out = CliRunner().invoke(cli, ["apply", str(_tuned(tmp_path, default))])
    assert out.exit_code == 0, out.output
    assert "the default configuration is recommended" in out.stderr
    assert _run_lines(out.stdout, tmp_path, "iotune_run echo ran").strip() == "ran"


def test_apply_rejects_a_non_tuned_file(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\n")
    out = CliRunner().invoke(cli, ["apply", str(path)])
    assert out.exit_code == 2
    assert "not a tuned configuration (no 'settings' key)" in out.output
    assert "Traceback" not in out.output


def test_apply_rejects_bad_setting_values(tmp_path):
    doc = dict(TUNED, settings={"stripe_count": -3})
    out = CliRunner().invoke(cli, ["apply", str(_tuned(tmp_path, doc))])
    assert out.exit_code == 2
    assert "settings.stripe_count: -3 is not a positive integer" in out.output


def test_a_per_file_glob_is_written_to_the_preload_file_as_it_is(tmp_path):
    glob = "*/$(touch pwned)'\"`x`;*.h5"
    doc = {"settings": {"cb_nodes": 2}, "files": {glob: {"cb_nodes": 4}, "*.log": {}}}
    path = tmp_path / "tuned.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))  # the patterns' order matters
    lines = render(load_tuned(path), "preload", library=_library(tmp_path))
    _run_lines(lines, tmp_path)
    assert not (tmp_path / "pwned").exists()
    assert (tmp_path / "iotune-preload-settings").read_text().splitlines() == [
        "hint:cb_nodes=2", f"file:{glob}", "hint:cb_nodes=4", "file:*.log"]
