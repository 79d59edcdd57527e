"""The parts of the report that reproduce the seed papers' figures.

* :func:`states_part` (Wan et al.): from the store's probe rounds, the latency histogram
  with the two fitted log-normal components, accuracy boxplots and ROC curves of the
  state classifiers, and the prediction-guided placement replayed over the rounds;
* :func:`phases_part` (Mendez et al.): from a DXT trace and a characterisation, the I/O
  phases along time with their estimated and measured times;
* :func:`similarity_part` (Rajesh et al.): the cosine similarity of the signatures of the
  Darshan logs given (and of a proxy's kernel configuration).

What each needs is in :class:`PaperInputs`; :meth:`PaperInputs.check` turns a bad
combination of options into one ConfigError naming the option.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from iotune import __version__
from iotune.backends import provenance_of
from iotune.errors import ConfigError, DataError
from iotune.report import paper_figures as pf
from iotune.report.parts import Part, Section, write_figure, write_table
from iotune.report.states import (
    REPORT_TARGETS,
    ROC_TARGETS,
    busiest_targets,
    fold_scores,
)
from iotune.report.tables import Table
from iotune.store import now_iso
from iotune.variability.replay import replay_placement

ProgressFn = Callable[[str], None]


@dataclass(frozen=True)
class PaperInputs:
    """What the paper figures are drawn from, besides the store (its probe rounds).

    ``darshan_logs`` and ``proxy``: the similarity heatmap; ``trace`` and
    ``characterization``: the phase timeline; ``probe_backend``: which probe rounds when
    the store holds several backends' (``probe`` measured, ``sim`` simulated); ``folds``
    and ``seed``: the classifiers' cross-validation.
    """

    darshan_logs: tuple[Path, ...] = ()
    proxy: Path | None = None
    trace: Path | None = None
    characterization: Path | None = None
    probe_backend: str | None = None
    folds: int = 5
    seed: int = 0

    @property
    def without_store(self) -> bool:
        """Whether these inputs make a report on their own (no store needed)."""
        return bool(self.darshan_logs or self.trace)

    def check(self) -> None:
        """ConfigError naming the option when the inputs do not go together."""
        if self.trace is not None and self.characterization is None:
            raise ConfigError("--trace: the phase timeline needs --characterization FILE "
                              "(written by 'iotune characterize') for the estimated times")
        if self.characterization is not None and self.trace is None:
            raise ConfigError("--characterization: only used with --trace TRACE (the trace "
                              "whose phases are estimated)")
        if self.proxy is not None and not self.darshan_logs:
            raise ConfigError("--proxy: the proxy joins the similarity heatmap of --darshan "
                              "logs; give at least one --darshan LOG")
        signatures = len(self.darshan_logs) + (self.proxy is not None)
        if self.darshan_logs and signatures < 2:
            raise ConfigError(f"--darshan: {signatures} signature is too few for a similarity "
                              "heatmap; give two or more logs, or one log and --proxy")
        if isinstance(self.folds, bool) or not isinstance(self.folds, int) or self.folds < 2:
            raise ConfigError(f"--folds: {self.folds!r} is not an integer >= 2")


def _footer(what: str) -> str:
    return f"{what} | iotune {__version__} | {now_iso()[:10]}"


def _word(provenance: str) -> str:
    return provenance.split("+")[0].capitalize()


# --- Wan et al.: storage states ------------------------------------------------------------


def states_part(records: Sequence[Mapping[str, Any]], inputs: PaperInputs, out: Path,
                fmt: str, say: ProgressFn) -> Part | None:
    """The storage-state part from the probe rounds among ``records`` (None without any).

    DataError when the probe rounds cannot be analysed at all (several backends without
    ``probe_backend``, several probe sizes); too few samples for a mixture or a classifier
    are said in the section instead.
    """
    from iotune.variability.analysis import label_states
    from iotune.variability.classify import probe_records
    from iotune.variability.samples import probe_samples

    rounds = probe_records(r if isinstance(r, dict) else dict(r) for r in records)
    if not rounds and inputs.probe_backend is None:
        return None
    try:
        samples = probe_samples(rounds, inputs.probe_backend)
    except DataError as exc:
        raise DataError(str(exc).replace("--backend", "--probe-backend")) from None
    chosen = [r for r in rounds if r.get("backend") == samples.backend]
    provenance = str(chosen[0].get("provenance") or provenance_of(samples.backend))
    word = _word(provenance)
    targets = sorted({str(t) for t in samples.frame["target"]})
    systems = sorted({str(r.get("system")) for r in chosen if r.get("system")})
    what = (f"{provenance} probe latencies ({samples.backend} backend) on "
            f"{', '.join(systems) or 'unknown system'} | {len(chosen)} rounds of "
            f"{len(targets)} target(s)")
    footer = _footer(what)
    facts = {"probes": what, "samples": len(samples.values)}
    part = Part("states", f"{word} storage states (Wan et al.)", provenance,
                f"These probe latencies are {provenance.upper()} ({samples.backend} backend, "
                f"{len(chosen)} rounds of {len(targets)} target(s)).", [], facts)

    def figure(stem: str, fig: Any, caption: str, label: str = provenance) -> None:
        section.items.append(write_figure(out, fmt, stem, fig, caption, label))

    section = Section("Latency mixture (Wan et al., Figure 6)")
    part.sections.append(section)
    try:
        states = label_states(samples)
    except DataError as exc:
        section.missing.append(f"No mixture: {exc}")
        return part
    mixture = states.model.mixture
    figure(f"states-mixture-{samples.backend}", pf.mixture_figure(
        samples.values, mixture, samples.unit, word, footer), MIXTURE_CAPTION)
    section.items.append(write_table(out, Table(
        f"states-mixture-{samples.backend}", f"{word}: the two log-normal components",
        ["state", "weight", f"median_{samples.unit}", f"mean_{samples.unit}", "sigma"],
        states.components())))
    facts["two states"] = "yes" if mixture.bimodal else "no (one log-normal fits as well)"

    section = Section("State classifiers (Wan et al., Figures 7, 9 and 10)")
    part.sections.append(section)
    _classifier_figures(samples, inputs, section, out, fmt, word, footer, say, provenance)

    section = Section("Prediction-guided placement (Wan et al., Figure 12)")
    part.sections.append(section)
    replayed = "simulated" if provenance == "simulated" else "replayed"
    try:
        replay = replay_placement(samples, seed=inputs.seed)
    except DataError as exc:
        section.missing.append(f"No placement replay: {exc}")
        return part
    section.notes.append(PLACEMENT_NOTE)
    section.notes.append(f"Placement {replay.verdict()}.")
    figure(f"states-placement-{samples.backend}", pf.placement_figure(
        replay, _word(replayed), _footer(f"{replayed}: placement over {what}")),
        PLACEMENT_CAPTION, replayed)
    section.items.append(write_table(out, Table(
        f"states-placement-{samples.backend}", f"{_word(replayed)}: placement per round",
        ["forecast", "time", "predicted_idle", "predicted_busy", "alpha", "even_mib_s",
         "placed_mib_s", "gain"],
        [{"forecast": f.forecast, **r.row()} for f in replay.forecasts for r in f.rounds],
        on_page=False, terminal=False)))
    facts["placement gain"] = ", ".join(
        f"{f.forecast} {f.mean_gain:.3f}x" for f in replay.forecasts) + f" (mean, {replayed})"
    facts["placement pays"] = "yes" if replay.pays else "no"
    return part


def _classifier_figures(samples: Any, inputs: PaperInputs, section: Section, out: Path,
                        fmt: str, word: str, footer: str, say: ProgressFn,
                        provenance: str) -> None:
    from iotune.variability.classification import ClassifyOptions, plan_classification
    from iotune.variability.classify import majority_accuracy

    options = ClassifyOptions(folds=inputs.folds, seed=inputs.seed, validation="kfold")
    samples, probed = busiest_targets(samples)
    if probed > REPORT_TARGETS:
        section.notes.append(f"Classifiers are scored on the {REPORT_TARGETS} targets with the "
                             f"most probe samples, of {probed}; iotune classify scores every "
                             "target.")
    try:
        plan = plan_classification(samples, options)
    except DataError as exc:
        section.missing.append(f"No classifier scores: {exc}")
        return
    for target, reason in plan.skipped.items():
        section.missing.append(f"Target {target} left out: {reason}")
    say(f"scoring {len(options.classifiers)} classifiers on {len(plan.groups)} target(s), "
        f"{inputs.folds} folds each ({plan.steps * inputs.folds} fits)")
    scores = fold_scores(plan, on_step=lambda line: say(f"classifier {line}"))
    majority = float(np.mean([majority_accuracy(g.labelled) for g in plan.groups]))
    backend = samples.backend
    section.items.append(write_figure(out, fmt, f"states-accuracy-{backend}",
                                      pf.accuracy_figure(scores, majority, inputs.folds, word,
                                                         footer), ACCURACY_CAPTION,
                                      provenance))
    shown = [g.name for g in plan.groups][:ROC_TARGETS]
    section.items.append(write_figure(out, fmt, f"states-roc-{backend}", pf.roc_figure(
        [s for s in scores if s.group in shown], word, footer), ROC_CAPTION, provenance))
    rows = [{"target": s.group, "classifier": s.classifier, "fold": i + 1, "accuracy": a,
             "roc_auc": s.roc[2]} for s in scores for i, a in enumerate(s.fold_accuracy)]
    section.items.append(write_table(out, Table(
        f"states-folds-{backend}", f"{word}: accuracy per fold", ["target", "classifier",
                                                                 "fold", "accuracy", "roc_auc"],
        rows, on_page=False, terminal=False)))


# --- Mendez et al.: phases ---------------------------------------------------------------


def phases_part(inputs: PaperInputs, out: Path, fmt: str) -> Part:
    """The phase timeline of ``inputs.trace`` estimated with ``inputs.characterization``."""
    from iotune.darshan.estimate import estimate_log

    assert inputs.trace is not None and inputs.characterization is not None
    found = estimate_log(inputs.trace, inputs.characterization)
    phases = found.phases.relevant
    rows = found.phase_rows()
    total = found.document["total"]
    name = inputs.trace.name
    what = (f"measured trace {name} ({found.phases.module}); estimate from the measured "
            f"characterisation {inputs.characterization.name}")
    section = Section("I/O phases (Mendez et al.)")
    hidden = len(found.phases.phases) - len(phases)
    if hidden:
        section.notes.append(f"{len(phases)} relevant phases shown; {hidden} phases below 1 % "
                             "of the time and of the bytes are left out.")
    section.items.append(write_figure(out, fmt, "phases-timeline", pf.phase_timeline_figure(
        phases, rows, total, "Measured", _footer(what)), PHASES_CAPTION, "measured"))
    section.items.append(write_table(out, Table(
        "phases-estimate", "Measured: phases with estimated and measured time",
        ["phase", "op", "request_size", "file", "ranks", "weight_bytes", "bandwidth_MiB_s",
         "estimated_s", "measured_s", "error_pct", "bandwidth_from"], rows, terminal=False)))
    error = total.get("error_pct")
    facts = {"trace": f"{name}: {len(phases)} relevant phases",
             "I/O time": f"estimated {total['estimated_s']:.4g} s, measured "
                         f"{total['measured_s']:.4g} s"
                         + (f" (error {error:.3g} %)" if error is not None else "")}
    return Part("phases", "Measured I/O phases (Mendez et al.)", "measured",
                f"The trace {name} is MEASURED; its estimated times come from the measured "
                f"characterisation {inputs.characterization.name}.", [section], facts)


# --- Rajesh et al.: similarity -----------------------------------------------------------


def similarity_part(inputs: PaperInputs, out: Path, fmt: str) -> Part:
    """The cosine similarity heatmap of the logs' signatures (and the proxy's)."""
    from iotune.darshan.similarity import pairwise_similarity
    from iotune.darshan.target import signature_target

    names: list[str] = []
    vectors: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    for path in inputs.darshan_logs:
        target = signature_target(path)
        names.append(_unique(path.name, names))
        vectors.append(target.chosen.vector)
        masks.append(target.mask)
    provenance = "measured"
    if inputs.proxy is not None:
        names.append(_unique(f"{inputs.proxy.name} (simulated signature)", names))
        vectors.append(_proxy_vector(inputs.proxy))
        provenance = "measured+simulated"
    mask = np.prod(np.vstack(masks), axis=0)
    n = len(vectors)
    matrix = np.ones((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            matrix[i, j] = matrix[j, i] = pairwise_similarity(vectors[i] * mask,
                                                              vectors[j] * mask)
    word = "Measured" if inputs.proxy is None else "Measured and simulated"
    what = (f"signatures of {len(inputs.darshan_logs)} measured Darshan log(s)"
            + (f" and the simulated signature of proxy {inputs.proxy.name}"
               if inputs.proxy is not None else ""))
    section = Section("Similarity across applications (Rajesh et al., Figure 1)")
    left_out = int(mask.size - mask.sum())
    if left_out:
        section.notes.append(f"{left_out} feature(s) that some log's Darshan version cannot "
                             "observe are left out of every signature.")
    section.items.append(write_figure(out, fmt, "similarity-heatmap", pf.similarity_figure(
        names, matrix, word, _footer(what)), SIMILARITY_CAPTION, provenance))
    rows = [{"signature": a, **{b: float(matrix[i, j]) for j, b in enumerate(names)}}
            for i, a in enumerate(names)]
    section.items.append(write_table(out, Table(
        "similarity-matrix", f"{word}: cosine similarity", ["signature", *names], rows,
        terminal=False)))
    banner = ("These signatures come from MEASURED Darshan logs" + (
        f"; the proxy's is SIMULATED from its kernel configuration ({inputs.proxy.name})"
        if inputs.proxy is not None else "") + ".")
    best = _most_similar(names, matrix)
    return Part("similarity", f"{word} I/O signatures (Rajesh et al.)",
                "simulated" if inputs.proxy is not None else "measured", banner, [section],
                {"signatures": ", ".join(names), "most similar pair": best})


def _proxy_vector(path: Path) -> np.ndarray:
    """The analytic signature of the configuration a proxy file holds."""
    from iotune.darshan.analytic import Candidate, kernel_file
    from iotune.darshan.proxy import read_proxy
    from iotune.darshan.signature import signature
    from iotune.kernel_specs import get_kernel

    proxy = read_proxy(path)
    collective = bool(proxy.settings.get("collective",
                                         get_kernel(proxy.kernel).collective_default))
    return signature(kernel_file(Candidate(proxy.kernel, proxy.args, collective,
                                           proxy.ranks or 1)))


def _unique(name: str, taken: Sequence[str]) -> str:
    if name not in taken:
        return name
    k = 2
    while f"{name} ({k})" in taken:
        k += 1
    return f"{name} ({k})"


def _most_similar(names: Sequence[str], matrix: np.ndarray) -> str:
    pairs = [(float(matrix[i, j]), names[i], names[j]) for i in range(len(names))
             for j in range(i + 1, len(names))]
    value, a, b = max(pairs)
    return f"{a} and {b} ({value:.3f})"


MIXTURE_CAPTION = ("The paper's Figure 6. Histogram of every probe latency (log axis; "
                   "height: density of ln latency) with the two log-normal components of "
                   "the fitted mixture, each scaled by its weight, and their sum. The "
                   "faster component is the idle state, the slower one busy.")
ACCURACY_CAPTION = ("The paper's Figure 7. Accuracy of each classifier on each fold of the "
                    "stratified, shuffled k-fold cross-validation of each probed target, "
                    "predicting the state of the next probe round (as 'iotune classify'); "
                    "dots are the folds, the dashed line the accuracy of always guessing "
                    "the more frequent state.")
ROC_CAPTION = ("The paper's Figures 9 and 10. ROC curves of each classifier for up to "
               f"{ROC_TARGETS} targets, from the decision scores each sample got from the "
               "model of the fold that held it out; busy is the positive state.")
PLACEMENT_CAPTION = ("The paper's Figure 12. Aggregate throughput of each probe round when "
                     "the data are spread evenly over the targets and when the idle share "
                     "alpha (equation 1) goes to the targets predicted idle, replaying the "
                     "recorded latencies.")
PLACEMENT_NOTE = ("Each target's state in a round is forecast from the round before: as the "
                  "same state (persistence), by a classifier trained per target on the "
                  "earlier rounds (the paper's method), and, as the most any forecast can "
                  "gain, the round's own states (hindsight). Write time is taken as "
                  "proportional to the data written.")
PHASES_CAPTION = ("The I/O phases of the trace along time (Mendez et al.): each phase's "
                  "measured span from its first operation's start to its last one's end "
                  "(solid) and its estimated time, weight over the characterised bandwidth "
                  "of its pattern, drawn from the same start (hatched). Labels: operation, "
                  "request size, file sharing and ranks.")
SIMILARITY_CAPTION = ("The paper's Figure 1. Cosine similarity of the primary signature "
                      "(the class of files that moved the most bytes) of every pair of "
                      "logs, after pairwise normalisation; 1 is the same I/O behaviour.")
