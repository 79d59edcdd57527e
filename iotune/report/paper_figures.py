"""The seed papers' figures, drawn as the tune figures are (:mod:`iotune.report.figures`).

Each function returns a matplotlib figure whose title starts with its provenance word
(``Measured``, ``Simulated``, ``Replayed``) and whose footer says where the numbers come
from; sizes and style are those of the other figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from iotune.darshan.phases import Phase
from iotune.report.figures import DEFAULT, DPI, MEASURED, PREDICTED, TUNE, WIDTH_IN, style
from iotune.report.states import FoldScores
from iotune.variability.mixture import MixtureFit
from iotune.variability.replay import HINDSIGHT, PlacementReplay

#: Histogram bins of the latency histogram (the paper's Figure 6 uses about this many).
HISTOGRAM_BINS = 40
#: Largest number of signatures whose similarity is written in each heatmap cell.
ANNOTATE_CELLS = 12
IDLE_COLOUR, BUSY_COLOUR = MEASURED, TUNE


def _figure(height: float, word: str, title: str, footer: str) -> Figure:
    figure = Figure(figsize=(WIDTH_IN, max(2.5, height)), dpi=DPI, layout="constrained")
    figure.suptitle(f"{word}: {title}", fontweight="bold")
    figure.supxlabel(footer, x=0.01, ha="left", fontsize=7, color="#555555")
    return figure


def phase_timeline_figure(phases: Sequence[Phase], rows: Sequence[dict[str, Any]],
                          total: dict[str, Any], word: str, footer: str) -> Figure:
    """Mendez et al.: left, each I/O phase along the run's time (its measured span, with
    a dot at its start so that short phases stay visible); right, each phase's measured
    time beside its estimated time ``weight / bandwidth`` on a log axis."""
    with style():
        estimated = {int(r["phase"]): float(r["estimated_s"]) for r in rows}
        figure = _figure(1.9 + 0.32 * max(len(phases), 3), word, "I/O phase timeline, "
                         "estimated against measured time", footer)
        timeline, times = figure.subplots(1, 2, sharey=True, width_ratios=(3, 2))
        origin = min((p.start for p in phases), default=0.0)
        y = np.arange(len(phases))[::-1].astype(float)
        bar = 0.38
        for pos, phase in zip(y, phases, strict=True):
            timeline.barh(pos, phase.duration, left=phase.start - origin, height=0.6,
                          color=MEASURED)
            timeline.plot([phase.start - origin], [pos], marker="o", markersize=3,
                          color=MEASURED)
            # A floor of 1 ns keeps a zero-length phase drawable on the log axis.
            times.barh(pos + bar / 2, max(phase.duration, 1e-9), height=bar, color=MEASURED)
            times.barh(pos - bar / 2, max(estimated[phase.index], 1e-9), height=bar,
                       color=PREDICTED, hatch="///", edgecolor="white", linewidth=0)
        timeline.set_yticks(y, [f"{p.index}: {p.op} {_size(p.request_size)} "
                                f"{'shared' if p.shared else 'per-proc'} x{p.ranks}"
                                for p in phases])
        for ax in (timeline, times):
            ax.grid(axis="y", visible=False)
        timeline.set_xlabel("time since the first phase started (s)")
        times.set_xscale("log")
        times.set_xlabel("phase time (s)")
        error = total.get("error_pct")
        subtitle = (f"total: estimated {total['estimated_s']:.4g} s, measured "
                    f"{total['measured_s']:.4g} s ({total['measured_from']})"
                    + (f", error {error:.3g} %" if error is not None else ""))
        handles = [Patch(color=MEASURED, label="measured (first start to last end)"),
                   Patch(facecolor=PREDICTED, hatch="///", edgecolor="white",
                         label="estimated: weight / characterised bandwidth")]
        timeline.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.01),
                        ncols=1, frameon=False, title=subtitle, alignment="left",
                        title_fontproperties={"size": 8}, borderaxespad=0.0)
        return figure


def _size(value: int) -> str:
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return f"{value / scale:.4g}{unit}"
    return f"{value}B"


def mixture_figure(latencies: Sequence[float], mixture: MixtureFit, unit: str, word: str,
                   footer: str) -> Figure:
    """Wan et al.'s Figure 6: the histogram of the latencies on a log axis, as a density of
    ``ln t``, with each fitted log-normal component ``w_k N(ln t; mu_k, sigma_k)`` and
    their sum."""
    with style():
        figure = _figure(4.2, word, "probe latency histogram with the two fitted log-normal "
                         "components", footer)
        ax = figure.add_subplot()
        values = np.asarray(latencies, dtype=float)
        logs = np.log(values)
        edges = np.linspace(logs.min(), logs.max(), HISTOGRAM_BINS + 1)
        if edges[-1] == edges[0]:
            edges = np.linspace(edges[0] - 0.5, edges[0] + 0.5, HISTOGRAM_BINS + 1)
        counts, _ = np.histogram(logs, bins=edges)
        density = counts / (values.size * np.diff(edges))
        ax.bar(np.exp(edges[:-1]), density, width=np.diff(np.exp(edges)), align="edge",
               color="#bbbbbb", edgecolor="white", linewidth=0.4,
               label=f"{values.size} latencies")
        grid = np.linspace(edges[0] - 0.3, edges[-1] + 0.3, 400)
        total = np.zeros_like(grid)
        components = [mixture.idle, mixture.busy] if mixture.bimodal else [mixture.idle]
        for component, colour in zip(components, (IDLE_COLOUR, BUSY_COLOUR), strict=False):
            weight = component.weight if mixture.bimodal else 1.0
            curve = weight * np.exp(-0.5 * ((grid - component.mu) / component.sigma) ** 2) / (
                component.sigma * math.sqrt(2 * math.pi))
            total += curve
            ax.plot(np.exp(grid), curve, color=colour, linewidth=1.6,
                    label=f"{component.name if mixture.bimodal else 'one state'}: weight "
                          f"{weight:.2f}, median {component.median:.3g} {unit}, "
                          f"sigma {component.sigma:.2f}")
        if mixture.bimodal:
            ax.plot(np.exp(grid), total, color="black", linewidth=1, linestyle="--",
                    label="mixture")
        ax.set_xscale("log")
        ax.set_xlabel(f"probe latency ({unit}, log scale)")
        ax.set_ylabel("density of ln(latency)")
        verdict = ("two states" if mixture.bimodal else
                   "one log-normal fits as well (BIC): no second state")
        ax.set_title(f"BIC {mixture.bic:.1f} with two states, {mixture.bic_one:.1f} with one: "
                     f"{verdict}", fontsize=8, loc="left")
        ax.legend(loc="upper right", framealpha=0.9)
        return figure


def accuracy_figure(scores: Sequence[FoldScores], majority: float, folds: int, word: str,
                    footer: str) -> Figure:
    """Wan et al.'s Figure 7: per classifier, a boxplot of its accuracy on every fold of
    every target; the dashed line is the accuracy of always guessing the frequent state."""
    with style():
        names = list(dict.fromkeys(s.classifier for s in scores))
        groups = sorted({s.group for s in scores})
        figure = _figure(3.8, word, "state prediction accuracy per classifier", footer)
        ax = figure.add_subplot()
        data = [[a for s in scores if s.classifier == n for a in s.fold_accuracy]
                for n in names]
        ax.boxplot(data, widths=0.5, patch_artist=True, boxprops={"facecolor": "#cfe0f3"},
                   medianprops={"color": "black"})
        ax.set_xticks(range(1, len(names) + 1), names)
        for i, values in enumerate(data, start=1):
            ax.scatter(np.full(len(values), i) + np.linspace(-0.12, 0.12, len(values)),
                       values, s=8, color=MEASURED, alpha=0.6, zorder=3)
        ax.axhline(majority, color=DEFAULT, linestyle="--", linewidth=1,
                   label=f"always guessing the frequent state ({majority:.3f})")
        ax.set_ylabel("accuracy on the fold")
        ax.set_xlabel("classifier")
        ax.set_ylim(min(0.0 if not data else min(min(d) for d in data if d), majority) - 0.05,
                    1.02)
        ax.set_title(f"{folds}-fold stratified cross-validation on {len(groups)} "
                     f"target(s): {folds * len(groups)} folds per box", fontsize=8, loc="left")
        ax.legend(loc="upper right", framealpha=0.9)
        return figure


def roc_figure(scores: Sequence[FoldScores], word: str, footer: str) -> Figure:
    """Wan et al.'s Figures 9-10: ROC curves of each classifier (busy is positive), one
    panel per target, from out-of-fold decision scores."""
    with style():
        groups = list(dict.fromkeys(s.group for s in scores))
        figure = _figure(3.6, word, "ROC curves of the state classifiers", footer)
        axes = figure.subplots(1, len(groups), squeeze=False)
        for ax, group in zip(axes.flat, groups, strict=True):
            for k, score in enumerate(s for s in scores if s.group == group):
                fpr, tpr, auc = score.roc
                ax.plot(fpr, tpr, color=f"C{k}", linewidth=1.4,
                        label=f"{score.classifier} (AUC {auc:.3f})")
            ax.plot([0, 1], [0, 1], color=DEFAULT, linestyle=":", linewidth=1,
                    label="chance")
            ax.set_title(f"target {group}", fontsize=9)
            ax.set_xlabel("false positive rate")
            ax.set_ylabel("true positive rate (busy)")
            ax.set_aspect("equal", adjustable="box")
            ax.legend(loc="lower right", framealpha=0.9, fontsize=7)
        return figure


def placement_figure(replay: PlacementReplay, word: str, footer: str) -> Figure:
    """Wan et al.'s Figure 12: aggregate throughput of each replayed round with even
    placement and with placement by each forecast (:mod:`iotune.variability.replay`)."""
    colours = {"persistence": DEFAULT, HINDSIGHT: PREDICTED}
    with style():
        figure = _figure(3.8, word, "aggregate throughput with and without "
                         "prediction-guided placement", footer)
        ax = figure.add_subplot()
        first = replay.forecasts[0].rounds
        x = np.arange(1, len(first) + 1)
        ax.plot(x, np.array([r.even_bytes_s for r in first]) / 2**20, color="black",
                linewidth=1.2, label="even placement")
        for forecast in replay.forecasts:
            placed = np.array([r.placed_bytes_s for r in forecast.rounds]) / 2**20
            ax.plot(x, placed, color=colours.get(forecast.forecast, MEASURED), linewidth=1.0,
                    linestyle=":" if forecast.forecast == HINDSIGHT else "-", marker="o",
                    markersize=2,
                    label=f"placed by {forecast.forecast}: mean gain "
                          f"{forecast.mean_gain:.3f}x, faster in {forecast.faster}, "
                          f"slower in {forecast.slower}")
        ax.set_title(f"the {len(first)} rounds after the {replay.train_rounds} the "
                     f"{replay.classifier} classifier trained on", fontsize=8, loc="left")
        ax.set_xlabel("probe round (replayed in order)")
        ax.set_ylabel("aggregate throughput (MiB/s)")
        ax.set_ylim(bottom=0)
        ax.legend(loc="lower right", framealpha=0.9, fontsize=7)
        return figure


def similarity_figure(names: Sequence[str], matrix: np.ndarray, word: str,
                      footer: str) -> Figure:
    """Rajesh et al.'s Figure 1: cosine similarity of every pair of signatures."""
    with style():
        n = len(names)
        figure = _figure(1.6 + 0.45 * max(n, 4), word, "cosine similarity of the I/O "
                         "signatures", footer)
        ax = figure.add_subplot()
        image = ax.imshow(matrix, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
        ax.set_xticks(range(n), names, rotation=45, ha="right")
        ax.set_yticks(range(n), names)
        ax.grid(False)
        if n <= ANNOTATE_CELLS:
            for i in range(n):
                for j in range(n):
                    value = float(matrix[i, j])
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                            color="black" if value > 0.6 else "white")
        figure.colorbar(image, ax=ax, label="cosine similarity")
        return figure
