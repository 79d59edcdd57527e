"""Tunes with a knowledge base against tunes without: REPLAYED production landscapes.

A knowledge base is built with the real ``iotune knowledge build`` from the landscapes of
one folder (``--kb-data``, each ``FILE.csv`` with its ``FILE.workload.yaml``; ``--kb-files``
chooses among them by a glob), and every landscape of another (``--judge-data``,
``--judge-files``) is tuned through the replay backend as ``iotune tune --backend replay
--fresh --budget B`` would (:func:`landscapes_lib.judged_tune`), once per seed with the
base (the query's priors for the judged file's sidecar) and once without. ``--split even``
(or ``odd``) halves one folder instead: the base from the files at even (odd) places in
sorted order, the judges from the others. Per file and overall, each arm prints:

- ``missed``: seeds that kept the default although a configuration at least 10% faster
  than the default (by the truth, the median of its recorded runs) was evaluated, over the
  seeds that evaluated one (the chances);
- ``slower``: seeds whose recommended change is more than 2% slower than the default;
- ``runs``: the mean runs a tune spent (the baseline and the race included);
- ``flat kept``: on files where nothing is 10% faster, seeds that kept the default.

The knowledge arm runs at the first budget of ``--budgets``, the cold arms at every
budget. Beside them, the floor of any tune that must confirm a change by the race's rule
at the first budget: an oracle that knows a configuration at least 10% faster spends the
baseline and that budget on it and the default alone and lets the race decide
(:func:`landscapes_lib.race_oracle`, the replay's draws for seeds ``0 ..
--oracle-seeds - 1``). Per file it prints the share of seeds missed when the oracle knows
the best configuration by the truth (``best``) and when it knows, per file, the one the
race confirms most often (``most``); overall, ``oracle B6 (race rule, best known) missed
X/C``, the same for ``most confirmable known``, and for ``any``: a seed missed only when
no configuration at least 10% faster is confirmed (a clairvoyant choice per seed). No tune
that confirms by the race's rule at that budget misses a smaller share than ``any`` (but
for the chance of its own seeds): at budget 6 the race confirms only with three runs of a
configuration against three of the default, so it cannot confirm two. When that share is
above the last cold arm's, the target cannot be met at that budget, and the output says
so. The last line is ``summary: knowledge B6 missed M1/C1 slower S1; cold B6 missed
M2/C2; cold B12 missed M3/C3`` (the first and last budgets). Before it, the issue's
targets: the knowledge arm misses no larger a share of chances than the cold arm at the
last budget, recommends a change more than 2% slower in at most 1% of seeds, and keeps the
default in at least 95% of seeds where nothing is 10% faster.

    python benchmarks/knowledge.py --kb-data ../shared/data/production \\
        --judge-data ../shared/data/production --split even --budgets 6,12 --seeds 20
    python benchmarks/knowledge.py --kb-data ../shared/data/production --kb-files 'cori_*' \\
        --judge-data ../shared/data/production --judge-files 'summit_*' --seeds 10
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from landscapes_lib import (  # noqa: E402
    Job,
    Landscape,
    LandscapeError,
    Outcome,
    RaceOracle,
    describe,
    missed_of,
    race_oracle,
    run_one,
    slower_of,
)
from quick_mode import add_quick, apply_quick  # noqa: E402

#: Outside the repository: the docs pass ``--kb-data`` and ``--judge-data`` (folders).
DATA_OPTION = ("--judge-data", "dir")
#: The line a run ends with (``--quick`` included).
SUMMARY = (r"^summary: knowledge B\d+ missed \d+/\d+ slower \d+; cold B\d+ missed \d+/\d+; "
           r"cold B\d+ missed \d+/\d+$")
#: The issue's targets: most share of seeds with a change more than 2% slower, least share
#: of seeds keeping the default where nothing is 10% faster.
MAX_SLOWER = 0.01
MIN_KEPT_FLAT = 0.95
#: Seeds of the race-rule oracle per file: its misses on files whose configurations were
#: recorded more than three times are shares of the seeds' draws, and 100 seeds put a
#: file's share within about 0.05 (one standard error at a share of 0.5).
ORACLE_SEEDS = 100
#: A workload sidecar's suffix beside its CSV.
SIDECAR = ".workload.yaml"


@dataclass(frozen=True)
class Arm:
    """One way of tuning: with the knowledge base or cold, at one budget."""

    knowledge: bool
    budget: int

    @property
    def name(self) -> str:
        return f"{'knowledge' if self.knowledge else 'cold'} B{self.budget}"


@dataclass(frozen=True)
class Tally:
    """One arm's outcomes on some files."""

    outcomes: tuple[Outcome, ...]
    flat: bool = False

    @property
    def missed(self) -> tuple[int, int]:
        return missed_of(self.outcomes)

    @property
    def slower(self) -> int:
        return slower_of(self.outcomes)

    @property
    def runs(self) -> float:
        return sum(o.runs for o in self.outcomes) / max(1, len(self.outcomes))

    @property
    def kept(self) -> int:
        return sum(o.recommend_default for o in self.outcomes)


def sidecar_of(csv: Path) -> Path:
    return csv.with_name(csv.name.removesuffix(".csv") + SIDECAR)


def chosen_files(folder: Path, pattern: str, split: str | None, half: str) -> list[Path]:
    """The CSVs of ``folder`` matching ``pattern``, sorted by name; with ``split``, those
    at even or odd places: ``half`` ``base`` takes ``split``'s places, ``judge`` the
    others. A CSV given instead of a folder is the one file, whatever the glob and the
    split say."""
    if folder.is_file():
        return [folder]
    files = sorted(folder.glob(pattern if pattern.endswith(".csv") else pattern + ".csv"))
    if split is None:
        return files
    start = 0 if split == "even" else 1
    if half == "judge":
        start = 1 - start
    return files[start::2]


def build_base(files: Sequence[Path], out: Path) -> str:
    """Build a knowledge base at ``out`` from ``files`` with ``iotune knowledge build``;
    returns its last output line (what it says it built)."""
    done = subprocess.run([sys.executable, "-m", "iotune", "knowledge", "build",
                           *map(str, files), "-o", str(out)], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"knowledge: iotune knowledge build failed: "
                         f"{(done.stderr or done.stdout).strip()}")
    said = (done.stdout + done.stderr).strip().splitlines()
    return said[-1] if said else "built"


def priors_of(base: Path, csv: Path) -> Any:
    """What the base tells a tune of ``csv`` (its sidecar's system and workload); None
    when it has no sidecar (the tune then runs without the base)."""
    from iotune.knowledge.descriptor import from_sidecar
    from iotune.knowledge.query import priors_for

    sidecar = sidecar_of(csv)
    if not sidecar.is_file():
        return None
    system, workload, _ = from_sidecar(sidecar)
    return priors_for(base, system, workload)


def landscapes(files: Sequence[Path]) -> list[Landscape]:
    out = []
    for path in files:
        try:
            out.append(describe(path))
        except LandscapeError as error:
            print(f"knowledge: skipped {error}", file=sys.stderr)
    return out


def run(lands: Sequence[Landscape], priors: dict[str, Any], arms: Sequence[Arm], seeds: int,
        jobs: int) -> dict[tuple[str, str], Tally]:
    """Every arm's outcomes per file: (file, arm name) -> tally."""
    from iotune.config import TuneConfig

    strategy = TuneConfig().strategy
    work = [(land, arm, Job(land, strategy, arm.budget, seed,
                            priors=priors.get(land.name) if arm.knowledge else None))
            for land in lands for arm in arms for seed in range(seeds)]
    jobs_only = [job for _, _, job in work]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            outcomes = list(pool.map(run_one, jobs_only, chunksize=4))
    else:
        outcomes = [run_one(job) for job in jobs_only]
    grouped: dict[tuple[str, str], list[Outcome]] = {}
    for (land, arm, _), outcome in zip(work, outcomes, strict=True):
        grouped.setdefault((land.name, arm.name), []).append(outcome)
    return {key: Tally(tuple(found), flat=not any(o.best * 1.1 <= o.default for o in found))
            for key, found in grouped.items()}


def oracles(lands: Sequence[Landscape], budget: int, seeds: int,
            jobs: int) -> dict[str, RaceOracle]:
    """Each file's :func:`landscapes_lib.race_oracle` at ``budget`` over ``seeds`` seeds."""
    work = [(land, budget, seeds) for land in lands]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            found = list(pool.map(_oracle_of, work))
    else:
        found = [_oracle_of(item) for item in work]
    return {land.name: oracle for land, oracle in zip(lands, found, strict=True)}


def _oracle_of(item: tuple[Landscape, int, int]) -> RaceOracle:
    return race_oracle(*item)


def _oracle_cell(oracle: RaceOracle) -> str:
    if not oracle.gain:
        return " ".join(f"{'-':>4}" for _ in range(3))
    return " ".join(f"{1 - confirmed / oracle.seeds:4.2f}"
                    for confirmed in (oracle.best, oracle.most, oracle.any))


def oracle_lines(found: dict[str, RaceOracle], budget: int,
                 target: tuple[int, int], target_arm: str) -> list[str]:
    """The oracle's overall lines at ``budget``, and whether ``target`` (the misses and
    chances of ``target_arm``) is below its floor."""
    chances = [o for o in found.values() if o.gain]
    total = sum(o.seeds for o in chances)
    missed_by = {what: sum(o.seeds - getattr(o, field) for o in chances)
                 for what, field in (("best known", "best"), ("most confirmable known", "most"),
                                     ("any", "any"))}
    lines = [f"oracle B{budget} (race rule, {what}) missed {missed}/{total} "
             f"({missed / max(1, total):.0%})" for what, missed in missed_by.items()]
    missed, had = target
    if total and had:
        floor, share = missed_by["any"] / total, missed / had
        lines.append(f"floor at B{budget}: a tune confirming by the race's rule misses "
                     f"{floor:.1%} of chances or more; {target_arm} misses {share:.1%}: "
                     + ("the target is below the floor, not reachable at this budget"
                        if floor > share else "the target is above the floor"))
    return lines


def _cell(tally: Tally) -> str:
    missed, chances = tally.missed
    return f"{missed:>2}/{chances:<3} {tally.slower:>3} {tally.runs:5.1f}"


def report(lands: Sequence[Landscape], priors: dict[str, Any],
           tallies: dict[tuple[str, str], Tally], arms: Sequence[Arm],
           found: dict[str, RaceOracle]) -> list[str]:
    """The per-file table, the overall lines, the oracle's floor, the targets and the
    summary line."""
    head = "".join(f"  {arm.name + ' missed slower runs':>28}" for arm in arms)
    oracle_head = f"oracle B{arms[0].budget} best most  any"
    lines = [f"{'file':<28}{head}  {oracle_head:>20}  knowledge"]
    for land in lands:
        known = priors.get(land.name)
        said = ("no sidecar" if known is None else "nothing similar" if known.empty else
                f"{len(known.candidates)} candidates, noise "
                + ("-" if known.noise is None else f"{known.noise.sigma:.2f}"))
        lines.append(f"{land.name:<28}" + "".join(
            f"  {_cell(tallies[(land.name, arm.name)]):>28}" for arm in arms)
            + f"  {_oracle_cell(found[land.name]):>20}  {said}")
    overall: dict[str, Tally] = {}
    for arm in arms:
        mine = [tallies[(land.name, arm.name)] for land in lands]
        overall[arm.name] = Tally(tuple(o for t in mine for o in t.outcomes))
        flat = [t for t in mine if t.flat]
        kept, seeds = sum(t.kept for t in flat), sum(len(t.outcomes) for t in flat)
        missed, chances = overall[arm.name].missed
        total = len(overall[arm.name].outcomes)
        lines.append(f"overall {arm.name}: missed {missed}/{chances} "
                     f"({missed / max(1, chances):.0%}); slower {overall[arm.name].slower}/"
                     f"{total}; runs {overall[arm.name].runs:.1f} per tune; nothing 10% "
                     f"faster: default kept {kept}/{seeds}")
    first, last = arms[0], arms[-1]
    mk, ck = overall[first.name].missed
    ml, cl = overall[last.name].missed
    lines += oracle_lines(found, first.budget, (ml, cl), last.name)
    flat = [tallies[(land.name, first.name)] for land in lands
            if tallies[(land.name, first.name)].flat]
    kept, seeds = sum(t.kept for t in flat), sum(len(t.outcomes) for t in flat)
    total = len(overall[first.name].outcomes)
    checks = [
        (f"{first.name} misses no larger a share than {last.name}",
         mk * max(1, cl) <= ml * max(1, ck)),
        (f"{first.name}: slower in <= 1% of seeds", overall[first.name].slower
         <= MAX_SLOWER * total),
        (f"{first.name}: nothing 10% faster, default kept >= 95%",
         seeds == 0 or kept >= MIN_KEPT_FLAT * seeds),
    ]
    lines += [f"{'PASS' if ok else 'FAIL'}  {what}" for what, ok in checks]
    cold_first = overall[Arm(False, first.budget).name].missed
    lines.append(f"summary: knowledge B{first.budget} missed {mk}/{ck} slower "
                 f"{overall[first.name].slower}; cold B{first.budget} missed "
                 f"{cold_first[0]}/{cold_first[1]}; cold B{last.budget} missed {ml}/{cl}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb-data", type=Path, default=None,
                        help="folder of CSVs with sidecars the base is built from (or one CSV)")
    parser.add_argument("--judge-data", type=Path, required=True,
                        help="folder of CSVs (with sidecars) tuned with and without it (or "
                             "one CSV)")
    parser.add_argument("--kb-files", default="*", help="glob of the base's files")
    parser.add_argument("--judge-files", default="*", help="glob of the judged files")
    parser.add_argument("--split", choices=("even", "odd"), default=None,
                        help="the base from the files at even (odd) places, the judges "
                             "from the others")
    parser.add_argument("--kb", type=Path, default=None,
                        help="judge with this knowledge base instead of building one "
                             "(--kb-data and --kb-files are then not read)")
    parser.add_argument("--budgets", default="6,12")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--oracle-seeds", type=int, default=ORACLE_SEEDS,
                        help="seeds of the race-rule oracle per file (default "
                             f"{ORACLE_SEEDS})")
    add_quick(parser, "budgets 6,12, 1 seed, 2 oracle seeds")
    args = apply_quick(parser, parser.parse_args(argv), budgets="6,12", seeds=1,
                       oracle_seeds=2)
    budgets = [int(b) for b in args.budgets.split(",")]
    if args.oracle_seeds < 1:
        parser.error(f"--oracle-seeds: {args.oracle_seeds} is not a positive number of seeds")
    if (args.kb is None) == (args.kb_data is None):
        parser.error("--kb-data: give the folder to build the base from, or --kb (one of "
                     "the two)")
    base_files = [] if args.kb_data is None else [
        f for f in chosen_files(args.kb_data, args.kb_files, args.split, "base")
        if sidecar_of(f).is_file()]
    judge_files = chosen_files(args.judge_data, args.judge_files, args.split, "judge")
    if args.kb is None and not base_files and not args.quick:
        parser.error(f"--kb-data: no CSV with a {SIDECAR} sidecar matches in {args.kb_data}")
    lands = landscapes(judge_files)
    if not lands:
        parser.error(f"--judge-data: no judgeable CSV matches in {args.judge_data}")
    arms = [Arm(True, budgets[0]), *(Arm(False, b) for b in budgets)]
    with tempfile.TemporaryDirectory(prefix="iotune-kb-") as tmp:
        base = args.kb or Path(tmp) / "bench.kb"
        if args.kb is None and not base_files:  # --quick on landscapes without sidecars
            built, priors = "nothing to build: no sidecar", {}
        else:
            built = "given" if args.kb else build_base(base_files, base)
            priors = {land.name: priors_of(base, land.path) for land in lands}
        tallies = run(lands, priors, arms, args.seeds, args.jobs)
    found = oracles(lands, budgets[0], args.oracle_seeds, args.jobs)
    origin = (f"{args.kb.name}" if args.kb else
              f"{len(base_files)} files of {args.kb_data.name} ({built})")
    print(f"knowledge: base {origin}; "
          f"{len(lands)} judged files of {args.judge_data.name}; default strategy, "
          f"{args.seeds} seeds (REPLAYED)")
    print("\n".join(report(lands, priors, tallies, arms, found)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
