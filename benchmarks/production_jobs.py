"""Production jobs replayed: how the job-by-job rule (``iotune job start``) does on a landscape.

Usage::

    python benchmarks/production_jobs.py --data ../shared/data/production/FILE.csv \
        --seeds 20 --jobs 40

``--data`` is a landscape in the format of ``../shared/data/production/`` (one row per
recorded run, the row with every setting empty the default; its largest scale is used),
``--seeds`` how many independent campaigns, ``--jobs`` how many production jobs each. Job
by job, :func:`iotune.production.rule.choose` (the code ``iotune job start`` runs) picks a
configuration from the jobs before it; the job then draws one recorded run of that
configuration, as the replay backend draws (seeded, without replacement until each was
used). The candidates are the file's other configurations in file order, as a tune would
hand them over. Jobs run one after another.

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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from landscapes_lib import open_backend  # noqa: E402
from quick_mode import add_quick, apply_quick  # noqa: E402

#: The production runs are outside the repository: the docs pass ``--data`` (a CSV).
DATA_OPTION = ("--data", "csv")
#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = (r"summary: correct \d+/\d+; slower jobs [0-9.]+%; settled after [0-9.]+ jobs "
           r"\(median\); regret -?[0-9.]+%")

from iotune.backends.replay import Recorded, replay_index  # noqa: E402
from iotune.production.rule import SLOWER, Run, assess, choose  # noqa: E402

#: A recommendation is correct within this factor of the best true time.
WITHIN = 1.05


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
             jobs: int) -> Campaign:
    """``jobs`` production jobs of one seed through the rule; ``keys`` are the
    configurations' replay keys (which seed the draws as the replay backend's)."""
    truth = {name: r.median for name, r in configs.items()}
    best = min(truth.values())
    candidates = [n for n in configs if n != "default"]
    runs: list[Run] = []
    drawn = dict.fromkeys(configs, 0)
    settled_after = jobs + 1
    for job in range(jobs):
        choice = choose(runs, "default", candidates)
        times = configs[choice.config].times
        seconds = times[replay_index(len(times), seed, keys[choice.config],
                                     drawn[choice.config])]
        drawn[choice.config] += 1
        runs.append(Run(choice.config, choice.role, seconds))
        if settled_after > jobs and assess(runs, "default", candidates).settled is not None:
            settled_after = job + 1
    final = assess(runs, "default", candidates).recommendation
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
    add_quick(parser, "2 campaigns of 10 jobs")
    args = apply_quick(parser, parser.parse_args(argv), seeds=2, jobs=10)
    if args.seeds < 1 or args.jobs < 1:
        parser.error("--seeds and --jobs must be positive integers")
    if not args.data.is_file():
        parser.error(f"--data: {args.data} is not a file")
    backend = open_backend(args.data)
    configs, keys = names(backend.table, max(backend.scales()))
    if "default" not in configs:
        parser.error(f"--data: {args.data.name} has no default row (every setting empty)")
    truth = {name: r.median for name, r in configs.items()}
    print(f"# {args.data.name}: REPLAYED; true times (median of recorded runs): "
          + ", ".join(f"{n} {t:.4g} s" for n, t in truth.items()), flush=True)
    done = []
    for seed in range(args.seeds):
        c = campaign(configs, keys, seed, args.jobs)
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
