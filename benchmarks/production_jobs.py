"""Production jobs replayed: how the job-by-job rule (``iotune job start``) does on a landscape.

Usage::

    python benchmarks/production_jobs.py --data ../shared/data/production/FILE.csv \
        --seeds 20 --jobs 40

``--data`` is a landscape in the format of ``../shared/data/production/`` (one row per
recorded run, the row with every setting empty the default; its largest scale is used),
``--seeds`` how many independent campaigns, ``--jobs`` how many production jobs each.

Each campaign starts as a user's does: a dedicated ``iotune tune --backend replay --budget
B`` of the landscape (``--tune-budget``, 12 by default; its seed is the campaign's) writes
a tuned file, and the jobs take it as ``iotune job start --candidate tuned.yaml`` does
(:func:`iotune.production.jobs.tuned_candidates`): the configurations it offers in its
order, with its estimate of the best found as the risk bound's prior. Job by job,
:func:`iotune.production.rule.choose` (the code ``iotune job start`` runs) picks a
configuration from the jobs before it; the job then draws one recorded run of that
configuration, as the replay backend draws (seeded, without replacement until each was
used), on a stream apart from the tune's (:func:`job_draw`): the jobs' runs are other
days' runs. Jobs run one after another. ``--tune-budget 0``: no tune, the file's other
configurations in file order and no estimate (the production runs alone), the draws those
of the replay backend with the campaign's seed; so too, said on the first line, on a file
the tune cannot run.

Judged by the truth, the median of a configuration's recorded runs:

- **correct**: seeds whose final recommendation (the default when nothing settled) has a
  true time within 5% of the best configuration's (the default included);
- **slower jobs**: share of all jobs that ran a configuration more than 10% slower than the
  default;
- **settled after**: the median over seeds of the job after which the rule first settled (a
  seed that never settled counts as ``jobs + 1``);
- **regret**: the extra true I/O time of all jobs against running the best configuration in
  every job, as a share of the latter.

One line per seed, then ``summary: correct C/N; slower jobs S%; settled after M jobs
(median); regret R%``. The times are REPLAYED from recorded production runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from landscapes_lib import open_backend, replay_config  # noqa: E402
from quick_mode import add_quick, apply_quick  # noqa: E402

#: The production runs are outside the repository: the docs pass ``--data`` (a CSV).
DATA_OPTION = ("--data", "csv")
#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = (r"summary: correct \d+/\d+; slower jobs [0-9.]+%; settled after [0-9.]+ jobs "
           r"\(median\); regret -?[0-9.]+%")

from iotune.backends.replay import Recorded, replay_index  # noqa: E402
from iotune.errors import IotuneError  # noqa: E402
from iotune.production.rule import SLOWER, Prior, Run, assess, choose  # noqa: E402

#: A recommendation is correct within this factor of the best true time.
WITHIN = 1.05
#: The dedicated tune a campaign starts from: the smaller budget of the production-noise
#: benchmark, what a user spends before handing the jobs over.
TUNE_BUDGET = 12
#: Entropy that sets the jobs' draws after a tune apart from the tune's (:func:`job_draw`).
JOB_STREAM = 1


@dataclass(frozen=True)
class Handover:
    """What a dedicated tune hands a campaign: the candidates in its order and its
    estimates (priors) by name."""

    candidates: list[str]
    priors: dict[str, Prior]


def handover(path: Path, configs: dict[str, Recorded], seed: int,
             budget: int) -> Handover | None:
    """The tuned file of ``iotune tune --backend replay --fresh --budget budget`` on
    ``path`` (tune seed ``seed``) as ``iotune job start --candidate`` takes it; None when
    the tune cannot run on the file."""
    import tempfile

    import yaml

    from iotune.backends.replay import ReplayBackend
    from iotune.production.jobs import tuned_candidates
    from iotune.store import Store
    from iotune.tune import tune
    from iotune.tuned import check_tuned
    from iotune.ui.output import to_plain

    named = {tuple(sorted(r.settings.items())): name for name, r in configs.items()}
    cores = next(iter(configs.values())).cores
    with tempfile.TemporaryDirectory(prefix="iotune-bench-") as tmp:
        config = replay_config(path.resolve(), Path(tmp), seed)
        try:
            result = tune(config, ReplayBackend(config), Store(config.store),
                          kernel=config.kernel.name, cores=cores, budget=budget, fresh=True)
        except IotuneError:
            return None
    # Through YAML and its checks, as the jobs read the file.
    doc = check_tuned(yaml.safe_load(yaml.safe_dump(to_plain(result.to_tuned()))))
    offered = [(named[tuple(sorted(c.items()))], p) for c, p in tuned_candidates(doc)]
    return Handover([n for n, _ in offered], {n: p for n, p in offered if p is not None})


def job_draw(recorded: int, seed: int, key: str, rep: int) -> int:
    """Which recorded run answers a job's ``rep``-th run of a configuration after a tune:
    :func:`~iotune.backends.replay.replay_index`'s draw on a stream of its own, so the
    jobs' runs are as independent of the tune's as runs on other days are. Continuing the
    tune's permutation instead would make them depend on it: a tune that drew a
    configuration's four good runs of five leaves the fifth, its slow one, for the jobs."""
    order = np.random.default_rng([seed, int(key, 16) % 2**63, JOB_STREAM]).permutation(
        recorded)
    return int(order[rep % recorded])


@dataclass(frozen=True)
class Campaign:
    """One seed's jobs, judged."""

    seed: int
    recommended: str
    correct: bool
    worse: bool  # the recommendation's true time is above the default's
    slower_jobs: int
    settled_after: int
    regret: float  # extra true time over the best's, as a share of it


def names(table: dict[str, Recorded], cores: int) -> tuple[dict[str, Recorded],
                                                          dict[str, str]]:
    """Readable names of the configurations recorded at ``cores`` (``default``, ``c1``,
    ``c2``... in file order) with their replay keys."""
    configs: dict[str, Recorded] = {}
    keys: dict[str, str] = {}
    for key, r in table.items():
        if r.cores != cores:
            continue
        name = f"c{sum(1 for n in configs if n != 'default') + 1}" if r.settings else "default"
        configs[name], keys[name] = r, key
    return configs, keys


def campaign(configs: dict[str, Recorded], keys: dict[str, str], seed: int,
             jobs: int, given: Handover | None = None) -> Campaign:
    """``jobs`` production jobs of one seed through the rule; ``keys`` are the
    configurations' replay keys (which seed the draws as the replay backend's); ``given``:
    what a tune handed over (None: the configurations in file order, no estimate)."""
    truth = {name: r.median for name, r in configs.items()}
    best = min(truth.values())
    candidates = (given.candidates if given is not None
                  else [n for n in configs if n != "default"])
    priors = given.priors if given is not None else {}
    runs: list[Run] = []
    drawn = dict.fromkeys(configs, 0)
    draw = replay_index if given is None else job_draw
    settled_after = jobs + 1
    for job in range(jobs):
        choice = choose(runs, "default", candidates, priors)
        times = configs[choice.config].times
        seconds = times[draw(len(times), seed, keys[choice.config], drawn[choice.config])]
        drawn[choice.config] += 1
        runs.append(Run(choice.config, choice.role, seconds))
        if (settled_after > jobs
                and assess(runs, "default", candidates, priors).settled is not None):
            settled_after = job + 1
    final = assess(runs, "default", candidates, priors).recommendation
    slower = sum(1 for r in runs if truth[r.config] > SLOWER * truth["default"])
    spent = sum(truth[r.config] for r in runs)
    return Campaign(seed, final, truth[final] <= WITHIN * best,
                    truth[final] > truth["default"], slower, settled_after,
                    spent / (jobs * best) - 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="landscape CSV")
    parser.add_argument("--seeds", type=int, default=20, help="campaigns (default 20)")
    parser.add_argument("--jobs", type=int, default=40, help="jobs per campaign (default 40)")
    parser.add_argument("--tune-budget", type=int, default=TUNE_BUDGET,
                        help=f"budget of the dedicated tune each campaign starts from "
                             f"(default {TUNE_BUDGET}; 0: no tune, the production runs alone)")
    add_quick(parser, "2 campaigns of 10 jobs")
    args = apply_quick(parser, parser.parse_args(argv), seeds=2, jobs=10)
    if args.seeds < 1 or args.jobs < 1 or args.tune_budget < 0:
        parser.error("--seeds and --jobs must be positive integers, --tune-budget at least 0")
    if not args.data.is_file():
        parser.error(f"--data: {args.data} is not a file")
    backend = open_backend(args.data)
    configs, keys = names(backend.table, max(backend.scales()))
    if "default" not in configs:
        parser.error(f"--data: {args.data.name} has no default row (every setting empty)")
    truth = {name: r.median for name, r in configs.items()}
    print(f"# {args.data.name}: REPLAYED; true times (median of recorded runs): "
          + ", ".join(f"{n} {t:.4g} s" for n, t in truth.items()), flush=True)
    given = [handover(args.data, configs, seed, args.tune_budget)
             if args.tune_budget else None for seed in range(args.seeds)]
    if not args.tune_budget:
        print("# candidates: the file's configurations in file order, no tune's estimate")
    elif any(g is None for g in given):
        print(f"# candidates: the tune of budget {args.tune_budget} cannot run on this file; "
              "the file's configurations in file order, no tune's estimate")
    else:
        print(f"# candidates: as a tune of budget {args.tune_budget} hands them over (its "
              "order, its estimate of the best found); the jobs' draws follow the tune's")
    done = []
    for seed in range(args.seeds):
        c = campaign(configs, keys, seed, args.jobs, given[seed])
        done.append(c)
        when = str(c.settled_after) if c.settled_after <= args.jobs else "never"
        verdict = ("correct" if c.correct else "WRONG") + (
            ", slower than the default" if c.worse else "")
        print(f"seed {seed}: recommends {c.recommended} ({verdict});"
              f" slower jobs {c.slower_jobs}/{args.jobs}; settled after {when}; regret "
              f"{100 * c.regret:.1f}%", flush=True)
    correct = sum(c.correct for c in done)
    slower = 100 * sum(c.slower_jobs for c in done) / (args.seeds * args.jobs)
    settled = statistics.median(c.settled_after for c in done)
    regret = 100 * statistics.mean(c.regret for c in done)
    print(f"summary: correct {correct}/{args.seeds}; slower jobs {slower:.1f}%; settled after "
          f"{settled:g} jobs (median); regret {regret:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
