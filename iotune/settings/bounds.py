"""The largest values iotune accepts, so a typo cannot start unbounded work.

Each bound is far above any real use and low enough that what it bounds is answered at
once: a number of ranks, a size, a count of repetitions, a search space or a training
plan above its bound is refused in one line before anything is built, run or stored.
docs/campaigns.md ("Limits") lists them with these reasons.
"""

from __future__ import annotations

#: Ranks of one run (``--cores``, ``train.scales[].cores``, a tuned file's ``cores``):
#: 16,777,216, above the core count of the largest machines (about 10^7).
MAX_CORES = 2**24

#: Any integer setting or kernel argument: the largest integer a JSON reader and a float
#: hold exactly (a store is JSON; a larger value would be rounded on the way back).
MAX_INTEGER = 2**53

#: Bytes one rank writes in one kernel run: 1 TiB, above the memory of any node, which a
#: checkpoint of one rank does not exceed.
MAX_BYTES_PER_RANK = 2**40

#: Repetitions of one configuration (``train.repetitions``, ``tune.repetitions``,
#: ``run --reps``): noise is measured with a handful; a thousand is a week of runs.
MAX_REPETITIONS = 1000

#: Configurations of a search space (the full factorial of its values, counted before it
#: is built): the papers' spaces hold 640 to 1080; 10^5 is a day of enumeration at most.
MAX_SPACE = 100_000

#: Runs of a training plan (configurations x repetitions over all scales, counted before
#: the plan is built) and a tune's budget: a million runs is years of allocation.
MAX_PLAN_RUNS = 1_000_000

#: Tasks of a training job array (``train --emit-sbatch --array``): 1000. Every task is a
#: worker claiming runs under the one store's lock, which a thousand share without waiting
#: long; Slurm's default ``MaxArraySize`` (1001) allows indices 0-1000 and no more.
MAX_ARRAY_TASKS = 1000
