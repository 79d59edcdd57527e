"""A production campaign run for real: an MPI-IO and a parallel HDF5 program, 40 jobs each,
from the job script of docs/production.md, three jobs at once, then one job killed with -9.

Each job is the documented script (``eval "$(iotune job start ...)"``, the program under
``mpiexec -n 2``, ``iotune job finish --seconds`` with the I/O time the program prints),
started with its own ``SLURM_JOB_ID``, all in one directory as jobs submitted from one are.
Both campaigns share one production journal. The programs (``programs/``) write one column
each of a row-major table of doubles, one value every 16 bytes per rank:

- ``columns_mpiio`` (4 MiB, no hint of its own): ROMIO writes the strided column by data
  sieving. The candidate ``romio_ds_write: disable`` makes that one write call per value,
  much slower: over 10 alternating runs at 2 ranks on this 2-core machine under the other
  developers' load (1-minute load about 9), the default's I/O time was 0.112-0.196 s
  (median 0.152 s) and the candidate's 1.35-2.57 s (median 2.00 s): 13x by the medians,
  and its fastest run 6.9x the default's slowest. After its one first trial the risk bound
  must keep it out, and the default stays the recommendation.
- ``columns_h5`` (2 MiB) disables data sieving through its own ``MPI_Info``; the candidate
  ``romio_ds_write: enable``, injected over it by the preload library, is much faster:
  over 10 alternating runs, the program's own hints took 0.78-1.47 s (median 1.23 s), the
  candidate 0.04-0.41 s (median 0.17 s: 7x faster). A second candidate restates the
  program's own hint (0.90-1.72 s, median 1.27 s: no change). The campaign must settle on
  the faster one.

A dedicated measurement (``iotune run``, 3 repetitions of every configuration, in a store of
its own) must find best what the campaign recommends. Nothing here asserts a time: the gaps
above decide the choices, and the runs are at 2 ranks with files of a few MiB. The file
took 3 min 26 s of wall time with the load at 4-6 (a job 5.8 s at the median, three at
once), 10 minutes with it at 9 (a job 20 s), and about 4 minutes of CPU: most of it in the
jobs' 160 ``iotune job`` commands, about 1.5 s of CPU each, mostly importing iotune. Since
``job start`` no longer imports scipy.stats and ``iotune job`` no longer imports the other
commands, a start takes about 1 s of CPU and a finish about 0.6 s (load 5), and the file
about 3.5 minutes of CPU.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from iotune.preload import LIBRARY_ENV, build_library
from iotune.production.jobs import DEFAULT, config_name, read_campaign
from iotune.store import Store

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SOURCES = Path(__file__).resolve().parent / "programs"
JOBS = 40  # per program (issue 36)
AT_ONCE = 3  # jobs running at the same time
DEDICATED_REPS = 3
TIMEOUT_S = 300
#: Rows of the killed job's program: 64 MiB per rank, seconds of writing, so the kill
#: lands while it writes.
KILLED_ROWS = 8 * 1024 * 1024
KILLED_JOB = "9001"

#: The job script of docs/production.md; ``ROWS`` may be set by whoever submits the job.
JOB_SCRIPT = """#!/bin/bash
set -euo pipefail
STORE={store}
eval "$(iotune job start --store $STORE --tag {tag} {candidates})"
seconds=$(iotune_run mpiexec -n 2 {program} "$PWD"/out-$SLURM_JOB_ID.dat "${{ROWS:-{rows}}}" \\
          | sed -n 's/.*"io_time_s": \\([0-9.]*\\).*/\\1/p')
iotune job finish --store $STORE --tag {tag} --seconds "$seconds"
"""


@dataclass(frozen=True)
class App:
    """One campaign: the program, how it is built, its rows and its ranked candidates."""

    source: str
    compiler: tuple[str, ...]
    rows: int
    candidates: tuple[dict[str, str], ...]
    first_job: int  # Slurm-like job ids first_job, first_job + 1, ...


APPS = {
    "columns-mpiio": App("columns_mpiio.c", ("mpicc",), 262144,
                         ({"romio_ds_write": "disable"},), 7000),
    "columns-h5": App("columns_h5.c", ("h5pcc", "-shlib"), 131072,
                      ({"romio_ds_write": "disable"}, {"romio_ds_write": "enable"}), 8000),
}
SLOW = config_name(APPS["columns-mpiio"].candidates[0])


@dataclass
class Campaign:
    """What the fixture ran: the journal, the programs, the job scripts, the environment."""

    root: Path
    store: Path
    programs: dict[str, Path]
    scripts: dict[str, Path]
    env: dict[str, str]
    job_wall_s: list[float]
    dedicated: dict[str, dict[str, float]]  # tag -> configuration -> median seconds
    before_kill: dict[str, dict[str, Any]]  # tag -> ``job status --format json``
    journal_before_kill: list[dict[str, Any]]

    def job_ids(self, tag: str) -> list[str]:
        first = APPS[tag].first_job
        return [str(first + i) for i in range(JOBS)]

    def iotune(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``iotune ARGS`` as a job script runs it; asserts it succeeded."""
        done = subprocess.run(["iotune", *args], env=self.env, capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)
        assert done.returncode == 0, done.stderr
        return done

    def status(self, tag: str) -> dict[str, Any]:
        out = self.iotune("job", "status", "--store", str(self.store), "--tag", tag,
                          "--format", "json")
        return json.loads(out.stdout)


def _build(app: App, out: Path) -> Path:
    binary = out / Path(app.source).stem
    done = subprocess.run([*app.compiler, "-Wall", "-Werror", "-O2", "-o", str(binary),
                           str(SOURCES / app.source)], capture_output=True, text=True,
                          cwd=out, timeout=TIMEOUT_S, check=False)  # h5pcc leaves a .o
    assert done.returncode == 0, done.stderr
    return binary


def _environment(root: Path, library: Path) -> dict[str, str]:
    """This checkout's ``iotune`` first on PATH, the preload library fixed, and nothing of
    the caller's MPI-IO settings or Slurm job."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "iotune"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m iotune "$@"\n')
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if k not in ("ROMIO_HINTS", "MPICH_MPIIO_HINTS", "IOTUNE_SETTINGS", "LD_PRELOAD",
                        "IOTUNE_PRELOAD_OUT", "IOTUNE_CONFIG") and not k.startswith("SLURM_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT))
    env[LIBRARY_ENV] = str(library)
    return env


def _write_scripts(root: Path, store: Path, programs: dict[str, Path]) -> dict[str, Path]:
    scripts = {}
    for tag, app in APPS.items():
        flags = []
        for rank, settings in enumerate(app.candidates):
            tuned = root / f"{tag}-tuned-{rank + 1}.yaml"
            tuned.write_text(yaml.safe_dump({"settings": settings}))
            flags.append(f"--candidate {shlex.quote(str(tuned))}")
        scripts[tag] = root / f"{tag}.sh"
        scripts[tag].write_text(JOB_SCRIPT.format(
            store=shlex.quote(str(store)), tag=tag, candidates=" ".join(flags),
            program=shlex.quote(str(programs[tag])), rows=app.rows))
    return scripts


def _job_dir(root: Path, job_id: str) -> Path:
    """The directory every job runs in: one for all, as jobs submitted from one directory
    share it (each job's settings files carry its id)."""
    path = root / "jobs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _submit(root: Path, script: Path, env: dict[str, str], job_id: str) -> tuple[str, float]:
    """Run one job to its end in the shared job directory; its id and wall seconds. The program's
    output is removed after it, as a job's scratch would be."""
    work = _job_dir(root, job_id)
    began = time.monotonic()
    done = subprocess.run(["bash", str(script)], cwd=work, env={**env, "SLURM_JOB_ID": job_id},
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    wall = time.monotonic() - began
    assert done.returncode == 0, f"job {job_id}: {done.stderr}"
    (work / f"out-{job_id}.dat").unlink()
    return job_id, wall


def _dedicated(root: Path, env: dict[str, str], programs: dict[str, Path]
               ) -> dict[str, dict[str, float]]:
    """Median I/O seconds of every configuration of each campaign, by ``iotune run``."""
    config = root / "dedicated.yaml"
    scratch = root / "scratch"
    scratch.mkdir()
    config.write_text(yaml.safe_dump({
        "system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": "2m"},
        "store": str(root / "dedicated.jsonl")}))
    medians: dict[str, dict[str, float]] = {}
    for tag, app in APPS.items():
        medians[tag] = {}
        for settings in ({}, *app.candidates):
            sets = [a for k, v in settings.items() for a in ("--set", f"{k}={v}")]
            command = f"{programs[tag]} {{scratch}}/out.dat {app.rows}"
            done = subprocess.run(
                ["iotune", "run", "-c", str(config), "--command", command, "--cores", "2",
                 "--metric", 'regex:"io_time_s": ([0-9.]+)', "--reps", str(DEDICATED_REPS),
                 *sets, "--format", "json"],
                env=env, cwd=root, capture_output=True, text=True, timeout=TIMEOUT_S,
                check=False)
            assert done.returncode == 0, done.stderr
            runs = json.loads(done.stdout)
            assert len(runs) == DEDICATED_REPS and all(r["status"] == "ok" for r in runs)
            for run in runs:  # the dedicated runs measured what they claim
                effect = run["result"]["hints_in_effect"]
                assert all(effect[k] == v for k, v in settings.items()), effect
            medians[tag][config_name(settings)] = statistics.median(
                r["result"]["times_s"]["total"] for r in runs)
    return medians


def _kill_a_job_mid_run(campaign: Campaign, tag: str, job_id: str) -> None:
    """Start job ``job_id`` of ``tag`` with a program that writes for seconds and, once its
    output file exists, SIGKILL the job script with its mpiexec, then the ranks."""
    work = _job_dir(campaign.root, job_id)
    output = work / f"out-{job_id}.dat"
    job = subprocess.Popen(["bash", str(campaign.scripts[tag])], cwd=work,
                           env={**campaign.env, "SLURM_JOB_ID": job_id,
                                "ROWS": str(KILLED_ROWS)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    ranks: list[int] = []
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not output.exists() and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert job.poll() is None, "the job ended before it could be killed"
        ranks = _ranks_writing(output)
        assert ranks, "no rank writes the job's output"
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)  # the job script and its mpiexec
        job.wait()
        # mpiexec starts its proxy and the ranks in sessions of their own: they go too
        _kill(ranks)
        output.unlink(missing_ok=True)


def _ranks_writing(output: Path) -> list[int]:
    """Pids of the processes whose command line names ``output`` (the program's ranks) and
    of their parents (mpiexec's proxy)."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if str(output).encode() in argv:
            found.add(int(entry.name))
            if parent > 1:
                found.add(parent)
    return sorted(found)


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Campaign]:
    """Both campaigns run to their 40th job, three jobs at once (jobs of the two programs
    interleaved), then every configuration measured apart, then one more job killed."""
    root = tmp_path_factory.mktemp("campaign")
    library = root / "libiotune_preload.so"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(LIBRARY_ENV, str(library))
        build_library()  # once, before jobs that would each find it missing
    programs = {tag: _build(app, root) for tag, app in APPS.items()}
    env = _environment(root, library)
    store = root / "iotune-production.jsonl"
    scripts = _write_scripts(root, store, programs)
    queue = [(tag, str(APPS[tag].first_job + i)) for i in range(JOBS) for tag in APPS]
    with ThreadPoolExecutor(AT_ONCE) as pool:
        walls = list(pool.map(lambda job: _submit(root, scripts[job[0]], env, job[1]),
                              queue))
    dedicated = _dedicated(root, env, programs)
    found = Campaign(root, store, programs, scripts, env, [w for _, w in walls], dedicated,
                     {}, [])
    found.before_kill = {tag: found.status(tag) for tag in APPS}
    found.journal_before_kill = Store(store).records()
    _kill_a_job_mid_run(found, "columns-mpiio", KILLED_JOB)
    print(f"{len(queue)} jobs, {AT_ONCE} at once: wall per job median "
          f"{statistics.median(found.job_wall_s):.1f} s, max {max(found.job_wall_s):.1f} s")
    yield found


@pytest.mark.parametrize("tag", sorted(APPS))
def test_every_job_leaves_one_start_and_one_finish(campaign: Campaign, tag: str) -> None:
    ids = campaign.job_ids(tag)
    records = [r for r in campaign.journal_before_kill if r.get("tag") == tag]
    starts = Counter(r["job_id"] for r in records if r["event"] == "start")
    finishes = Counter(r["job_id"] for r in records if r["event"] == "finish")
    assert starts == finishes == Counter(ids)
    assert all(r["status"] == "ok" and r["io_seconds"] > 0 for r in records
               if r["event"] == "finish")
    assert all(r["provenance"] == "production" for r in records)
    doc = campaign.before_kill[tag]
    assert doc["provenance"] == f"{JOBS} production jobs" and doc["running"] == 0
    assert sum(c["runs"] for c in doc["configurations"]) == JOBS


def test_the_much_slower_configuration_runs_once_and_is_then_held_back(
        campaign: Campaign) -> None:
    chosen = [r["config"] for r in campaign.journal_before_kill
              if r.get("tag") == "columns-mpiio" and r["event"] == "start"]
    assert chosen.count(SLOW) == 1  # its first trial, never again
    assert all(c == DEFAULT for c in chosen[chosen.index(SLOW) + 1:])
    rows = {c["config"]: c for c in campaign.before_kill["columns-mpiio"]["configurations"]}
    assert rows[SLOW]["runs"] == 1 and rows[SLOW]["state"] == "held back"


@pytest.mark.parametrize("tag", sorted(APPS))
def test_the_recommendation_is_what_a_dedicated_measurement_finds_best(
        campaign: Campaign, tag: str) -> None:
    medians = campaign.dedicated[tag]
    best = min(medians, key=medians.__getitem__)  # the default when nothing is better
    doc = campaign.before_kill[tag]
    assert doc["recommendation"] == best, (doc["needed"], medians)
    assert doc["recommended_settings"] == next(
        (c for c in APPS[tag].candidates if config_name(c) == best), {})
    assert doc["settled"] or best == DEFAULT


def test_a_job_killed_with_sigkill_mid_run_leaves_no_damaged_record(campaign: Campaign) -> None:
    check = campaign.iotune("store", "check", "--store", str(campaign.store), "--format",
                            "json")
    journal = json.loads(check.stdout)["checks"][0]
    assert journal["bad_lines"] == [] and journal["lines"] == journal["records"]
    before = campaign.journal_before_kill
    after = Store(campaign.store).records()
    assert after[:len(before)] == before
    assert [(r["event"], r["job_id"]) for r in after[len(before):]] == [("start", KILLED_JOB)]
    runs = read_campaign(Store(campaign.store), "columns-mpiio").runs
    assert runs[-1].pending and runs[-1].seconds is None
    doc = campaign.status("columns-mpiio")
    assert doc["jobs"] == JOBS + 1 and doc["running"] == 1
    assert sum(c["runs"] for c in doc["configurations"]) == JOBS  # no time for the killed job
