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

#: Any integer setting or kernel argument, and any count or seed without a bound of its own
#: (``--seed``, ``--folds``, ``--class``, an integer ``--option``): the largest integer a
#: JSON reader and a float hold exactly (a store is JSON; a larger value would be rounded
#: on the way back).
MAX_INTEGER = 2**53

#: Bytes one rank writes in one kernel run: 1 TiB, above the memory of any node, which a
#: checkpoint of one rank does not exceed.
MAX_BYTES_PER_RANK = 2**40

#: Repetitions of one configuration (``train.repetitions``, ``tune.repetitions``,
#: ``run --reps``): noise is measured with a handful; a thousand is a week of runs.
MAX_REPETITIONS = 1000

#: Configurations of a search space (the full factorial of its values, counted before it
#: is built): the papers' spaces hold 640 to 1080; 10^5 is a day of enumeration at most.
#: Also any number of configurations asked for (``report --top``, ``--option top_k``,
#: ``top_k_refit``, ``batch``, ``population``): no space holds more.
MAX_SPACE = 100_000

#: Runs of a training plan (configurations x repetitions over all scales, counted before
#: the plan is built) and a tune's budget: a million runs is years of allocation. Also
#: what costs at least one run each (``--option generations``, ``refit_rounds``,
#: ``startup``).
MAX_PLAN_RUNS = 1_000_000

#: Seconds of any duration a flag or a config gives (``system.timeout``, ``job finish
#: --seconds``, ``status --watch``, ``--lease``, a probe's ``--interval``, ``--duration``
#: and ``--queue-interval``, ``--gap``, ``--window``, ``--measured``, ``--t-idle``): a year,
#: longer than any batch job's time limit (Python's ``time.sleep`` fails on a wait of
#: 10^10 s).
MAX_SECONDS = 365 * 24 * 3600

#: The simulated noise level (``--noise``, ``backend.noise``): 1 is a system's measured
#: run-to-run variability; at 10 one configuration's times already spread over orders of
#: magnitude, and near 100 the simulated bandwidth of a 4-rank run reaches 10^16 MiB/s.
MAX_NOISE = 10

#: Storage targets (``system.ost_count``, ``probe --targets``, ``placement --idle`` and
#: ``--busy``): 65,536, above the OST count of the largest Lustre file systems (a few
#: thousand).
MAX_OSTS = 2**16

#: Rounds of one probe session (``probe --rounds``, ``--large-every``, ``classify
#: --horizon``, and the rounds a ``--duration`` and ``--interval`` give with
#: ``--simulate``): a million rounds is a year at one every 30 s.
MAX_PROBE_ROUNDS = 1_000_000

#: Latencies of one simulated probe session (rounds x targets), drawn and written to the
#: store at once: ten million is a store of about a gigabyte.
MAX_SIMULATED_PROBES = 10_000_000

#: Bootstrap models of a model's ensemble (``--option members``): 16 by default; each
#: member is one more greedy fit at every refit, so a tune's fitting time grows with it,
#: and past a few hundred the spread it measures no longer changes.
MAX_ENSEMBLE = 1000

#: The spread of a log-normal in a sim preset's ``noise`` block (``idle_sigma``,
#: ``busy_sigma``): measured systems show 0.08 to 0.3; at 2 one standard deviation already
#: multiplies a time by 7, and far larger ones, scaled by the noise level, overflow the
#: simulated factor.
MAX_NOISE_SIGMA = 2
#: Tasks of a training job array (``train --emit-sbatch --array``): 1000. Every task is a
#: worker claiming runs under the one store's lock, which a thousand share without waiting
#: long; Slurm's default ``MaxArraySize`` (1001) allows indices 0-1000 and no more.
MAX_ARRAY_TASKS = 1000
