"""The printer's rules for job scripts: a path printed so that only its plain variables
expand, and Slurm's names, times and directive values as sbatch reads them."""

from __future__ import annotations

import subprocess

import pytest

from iotune.errors import ConfigError
from iotune.execution.slurm import job_time_limit, render_job_script
from iotune.printable import (
    MAX_SLURM_NAME,
    ShellPath,
    SlurmName,
    SlurmPath,
    SlurmTime,
    printed,
    slurm_time_seconds,
)


@pytest.mark.parametrize(("given", "shown"), [
    ("lustre/out", "lustre/out"),
    ('"$SCRATCH/out"', '"${SCRATCH}"/out'),
    ("$SCRATCH/out", '"${SCRATCH}"/out'),
    ("${SCRATCH}/run-1", '"${SCRATCH}"/run-1'),
    ("'a b'/c", "'a b/c'"),
    ("x'; touch pwned; '", "'x; touch pwned; '"),
    ("'$(touch pwned)'", "'$(touch pwned)'"),
    ('"$A$B"', '"${A}""${B}"'),
    ("été", "'été'"),
])
def test_a_path_is_printed_again_with_its_variables_alone_left_to_expand(given, shown):
    assert ShellPath(given, "--dir").text() == shown


def test_the_printed_path_means_in_bash_what_was_written(tmp_path):
    """Run by bash with hostile values in the variables: each word is one argument, the
    variables' values taken as they are."""
    env = {"PATH": "/usr/bin:/bin", "SCRATCH": "$(touch pwned) *", "A": "`touch pwned`"}
    for given, meant in [('"$SCRATCH/out"', "$(touch pwned) */out"), ("$A/x", "`touch pwned`/x"),
                         ("'a b'", "a b"), ("'$(touch pwned)'", "$(touch pwned)")]:
        line = printed("printf '%s\\n' {path}", path=ShellPath(given, "--dir"))
        done = subprocess.run(["bash", "-c", line], env=env, cwd=tmp_path, capture_output=True,
                              text=True, check=True)
        assert done.stdout == meant + "\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("given", "rule"), [
    ("${X@P}", "is not $NAME or ${NAME}"), ("${!X}", "is not $NAME or ${NAME}"),
    ("${X:-$(touch p)}", "is not $NAME or ${NAME}"), ("$(touch p)", "is not $NAME"),
    ("$((1))", "is not $NAME"), ("$1", "is not $NAME"), ("$?", "is not $NAME"),
    ('"`touch p`"', "inside double quotes"), ('"a\\b"', "inside double quotes"),
    ("`touch p`", "outside quotes"), ("a b", "outside quotes"), ("a;b", "outside quotes"),
    ("~/x", "outside quotes"), ("*.d", "outside quotes"), ("{a,b}", "outside quotes"),
    ("'open", "unclosed quote"), ('"open', "unclosed quote"), ("", "is empty"),
    ("''", "is empty"), ("-rf", "starts with '-'"), ("x\ny", "control character"),
    ("x" * 4097, "PATH_MAX"),
])
def test_a_path_with_anything_else_is_refused_naming_the_rule(given, rule):
    with pytest.raises(ConfigError) as refused:
        ShellPath(given, "--dir").text()
    assert str(refused.value).startswith("--dir: ") and rule in str(refused.value)
    assert "\n" not in str(refused.value)


def test_slurm_names_are_what_sbatch_and_a_shell_read_alike():
    assert SlurmName("debug_1.x-2", "--partition").text() == "debug_1.x-2"
    assert SlurmName("a" * MAX_SLURM_NAME, "--account").text() == "a" * MAX_SLURM_NAME
    for bad in ["a" * (MAX_SLURM_NAME + 1), "", "-x", ".x", "a b", "a#b", "a'b", "a\nb",
                "$(x)", "a\u202eb", "é"]:
        with pytest.raises(ConfigError, match=r"^--partition: .* is not a Slurm name"):
            SlurmName(bad, "--partition").text()


@pytest.mark.parametrize(("text", "seconds"), [
    ("30", 1800), ("30:15", 1815), ("2:30:00", 9000), ("1-0", 86400), ("1-2", 93600),
    ("1-2:30", 95400), ("1-2:30:15", 95415), ("0:30", 30)])
def test_slurm_time_formats(text, seconds):
    assert slurm_time_seconds(text) == seconds
    assert SlurmTime(text, "--time").text() == text


@pytest.mark.parametrize("text", ["0", "0:00", "366-0", "525601", "1e20", "-5", "nan", "1h",
                                  "1:2:3:4", "1-", "1-2-3", " 10", "10\n", "9" * 30])
def test_other_times_are_refused(text):
    with pytest.raises(ConfigError, match=r"^--time: .* is not a Slurm time limit"):
        SlurmTime(text, "--time").text()


def test_every_directive_value_is_checked_and_paths_keep_slurm_patterns_out():
    text = render_job_script({"nodes": 2, "output": SlurmPath("/a/b", "dir", file="o-%j.out"),
                              "requeue": True, "account": None}, ["true"])
    assert text == "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --output=/a/b/o-%j.out\n" \
                   "#SBATCH --requeue\ntrue\n"
    for bad in ({"nodes": "2 #x"}, {"nodes": "2\ntouch pwned"}, {"x": "'a'"}):
        with pytest.raises(ConfigError, match="cannot be written in an #SBATCH line"):
            render_job_script(bad, [])
    for directory in ["/a b", "/a%j", "/a'b", "/a#b", "/a\\b"]:
        with pytest.raises(ConfigError, match=r"^dir: .* cannot be written in an #SBATCH"):
            SlurmPath(directory, "dir", file="o.out").text()


def test_an_estimated_time_past_a_year_is_refused_with_the_way_out():
    assert job_time_limit(None, 90061, "advice").text() == "1-01:02:00"
    assert job_time_limit("2:00:00", 1e12, "advice").text() == "2:00:00"  # given wins
    with pytest.raises(ConfigError, match=r"^--emit-sbatch: .* 366 days, is above .*; use "):
        job_time_limit(None, 366 * 86400, "use --array")
