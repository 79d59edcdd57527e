"""The report's figures, drawn with matplotlib's object API (no pyplot, no GUI backend).

Every figure is ``WIDTH_IN`` inches wide at ``DPI`` dots per inch and saved without
cropping, so a PNG is exactly ``figure size x DPI`` pixels (:func:`pixel_size`). Titles start
with the data's provenance word (``Measured``, ``Simulated``, ``Replayed``) and every figure
carries a provenance footer. Axis labels carry units; long configuration labels sit on the
y axis of horizontal bars, where they cannot overlap.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from iotune.kernel_specs import metric_of
from iotune.report.data import (
    ConfigResult,
    Dataset,
    ScaleTune,
    SearchSession,
    settings_label,
    short_name,
)
from iotune.report.decision import ScaleDecision
from iotune.report.modelfit import Effect, ModelView, step_errors
from iotune.settings.values import describe_value
from iotune.strategies.racing import CONFIDENCE

WIDTH_IN = 8.0
DPI = 150
#: Relative error band drawn around the diagonal of the predicted-vs-measured plot.
BAND = 0.25
MEASURED, PREDICTED, DEFAULT, TUNE = "#1f5fa8", "#e08a1e", "#7a7a7a", "#c0392b"
STYLE = {"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
         "xtick.labelsize": 8, "ytick.labelsize": 8, "figure.titlesize": 11,
         "svg.hashsalt": "iotune", "axes.grid": True, "grid.alpha": 0.3}


#: Searches drawn per panel of the search figure, the latest ones: a figure of thousands
#: of lines (a store of a year's tunes) shows nothing and costs memory; the table has all.
SEARCH_LINES = 12
#: Runs drawn per campaign in the model-fit scatter, at random (seeded) beyond it: the
#: figure of 10^5 points looks the same and costs far more to draw.
SCATTER_POINTS = 5000

def pixel_size(figure: Figure) -> tuple[int, int]:
    """(width, height) in pixels of ``figure`` saved at ``DPI``."""
    width, height = figure.get_size_inches()
    return round(width * DPI), round(height * DPI)


@contextmanager
def style() -> Iterator[None]:
    """The report's matplotlib style (:data:`STYLE`) while drawing or saving."""
    with rc_context(cast(Any, STYLE)):
        yield


_style = style


def _figure(height: float, dataset: Dataset, title: str) -> Figure:
    """A figure with the provenance title and footer (the footer is the figure's x label,
    so constrained layout keeps room for it)."""
    figure = Figure(figsize=(WIDTH_IN, max(2.5, height)), dpi=DPI, layout="constrained")
    figure.suptitle(f"{dataset.provenance.title_word}: {title}", fontweight="bold")
    figure.supxlabel(dataset.provenance.line(), x=0.01, ha="left", fontsize=7,
                     color="#555555")
    return figure


def save(figure: Figure, path: Path, fmt: str) -> Path:
    """Write ``figure`` to ``path`` (png or svg) and return the path."""
    metadata = {"Date": None} if fmt == "svg" else None
    with _style():
        figure.savefig(path, format=fmt, dpi=DPI, metadata=metadata)
    return path


def _varying(configs: Sequence[ConfigResult]) -> tuple[list[str], dict[str, Any]]:
    """Settings that differ between ``configs``, and those every one has at one value."""
    names = list(dict.fromkeys(n for c in configs for n in c.settings))
    varying, constant = [], {}
    for name in names:
        values = {repr(c.settings.get(name)) for c in configs}
        if len(values) > 1:
            varying.append(name)
        else:
            constant[name] = configs[0].settings.get(name)
    return varying, constant


def topk_figure(dataset: Dataset, tune: ScaleTune, top: int,
                model_error: str | None = None,
                decision: ScaleDecision | None = None) -> Figure:
    """The paper's Figures 2-4: the ``top`` configurations by the race's estimate
    (``decision``'s; without one, by median time), with the model's prediction beside
    each, labelled by their settings; the default last. ``model_error`` (e.g. ``model CV
    error 0.31``) is written above the plot beside the predictions' legend.

    Measured bars are the estimates with whiskers over their interval (without a
    decision, medians with whiskers from the fastest to the slowest repetition).
    The default is grey, labelled ``default``; when it is far slower than the configurations
    shown, its bar is cut at the edge of the plot and its time written on it, so the
    configurations stay comparable. The time axis is logarithmic when the configurations
    shown span more than a factor of 30.
    """
    metric = metric_of(dataset.provenance.kernel, tune.params)

    def centre(entry: ConfigResult) -> float:
        found = decision.estimate(entry) if decision is not None else None
        return metric.shown(entry.median if found is None else found.time_s)

    def whiskers(entry: ConfigResult) -> list[list[float]]:
        found = decision.estimate(entry) if decision is not None else None
        interval = None if found is None else found.shown_interval(metric)
        low, high = interval or metric.shown_interval(min(entry.times), max(entry.times))
        return [[centre(entry) - low], [high - centre(entry)]]

    with _style():
        order = ([c for c, _ in decision.ranked if not c.is_default] if decision is not None
                 else tune.configs)
        shown = order[:top]
        default = tune.default
        entries: list[ConfigResult] = [*shown, *([default] if default else [])]
        varying, constant = _varying(shown)
        title = (f"top {len(shown)} configurations of {dataset.provenance.kernel} at "
                 f"{tune.cores} ranks")
        figure = _figure(1.9 + 0.36 * len(entries), dataset, title)
        ax = figure.add_subplot()
        times = [metric.shown(t) for e in shown for t in e.times]
        times += [metric.shown(e.predicted) for e in shown
                  if e.predicted and e.predicted > 0]
        log = bool(times) and max(times) / min(times) > 30
        limit = max(times) * (2.0 if log else 1.12) if times else None
        off_scale = default is not None and limit is not None and centre(default) > limit
        y = np.arange(len(entries))[::-1].astype(float)
        bar = 0.38
        labels = []
        for i, (entry, pos) in enumerate(zip(entries, y, strict=True)):
            if entry.is_default:
                labels.append("default (no settings)")
                _default_bar(ax, pos, bar, limit if off_scale else None,
                             centre(entry), whiskers(entry), metric.unit)
                continue
            ax.barh(pos + bar / 2, centre(entry), height=bar, color=MEASURED,
                    xerr=whiskers(entry),
                    error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "black"})
            if entry.predicted is not None and entry.predicted > 0:
                ax.barh(pos - bar / 2, metric.shown(entry.predicted), height=bar,
                        color=PREDICTED,
                        hatch="///", edgecolor="white", linewidth=0)
            labels.append(f"{i + 1}. {settings_label(entry.settings, varying)}")
        ax.set_yticks(y, labels)
        for tick, entry in zip(ax.get_yticklabels(), entries, strict=True):
            if entry.is_default:
                tick.set_fontweight("bold")
        if log:
            ax.set_xscale("log")
        if limit is not None:
            ax.set_xlim(right=limit)
        if log:
            _log_labels(ax.xaxis)
        if not log:
            ax.set_xlim(left=0)
        ax.set_xlabel(f"{metric.label} ({metric.unit})")
        ax.set_ylim(-0.7, len(entries) - 0.3)
        ax.grid(axis="y", visible=False)
        handles = [Patch(color=MEASURED, label="measured (median; whiskers: min-max)"
                         if decision is None else
                         f"measured (estimate; whiskers: its {CONFIDENCE:.0%} interval)"),
                   Patch(facecolor=PREDICTED, hatch="///", edgecolor="white",
                         label="predicted by the model"),
                   Patch(color=DEFAULT, label="default configuration")]
        subtitle = []
        if decision is not None and decision.best is not None:
            gain = decision.speedup
            subtitle.append(f"recommended: {decision.recommendation}; best found "
                            f"{centre(decision.best):.3g} {metric.unit}"
                            + (f", {gain.value:.3g}x the default's speed" if gain is not None
                               and not decision.best.is_default else ""))
        if constant:
            subtitle.append("all with " + settings_label(constant))
        if shown and all(e.predicted is None for e in shown):
            subtitle.append("no model predictions")
        elif model_error:
            subtitle.append(f"predicted: {model_error}")
        # Above the plot, one artist: constrained layout keeps room for it.
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncols=2,
                  frameon=False, title="; ".join(subtitle) or None, alignment="left",
                  title_fontproperties={"size": 8}, borderaxespad=0.0)
        return figure


def _default_bar(ax: Axes, pos: float, bar: float, cut: float | None, centre: float,
                 whiskers: list[list[float]], unit: str) -> None:
    """The default's bar at ``centre`` with ``whiskers``; cut at ``cut`` (the plot's edge)
    with its figure (in ``unit``) written on it."""
    if cut is None:
        ax.barh(pos, centre, height=bar * 1.6, color=DEFAULT, xerr=whiskers,
                error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "black"})
        ax.axvline(centre, color=DEFAULT, linestyle="--", linewidth=1)
        return
    ax.barh(pos, cut, height=bar * 1.6, color=DEFAULT)
    ax.text(cut, pos, f"{centre:.4g} {unit} (off scale)  \u00bb ", color="white",
            ha="right", va="center", fontsize=8, fontweight="bold")


def model_fit_figure(dataset: Dataset, view: ModelView) -> Figure:
    """Predicted against measured write time over every run the model can predict, on
    log axes, with the diagonal and a band of +-``BAND`` relative error."""
    with _style():
        figure = _figure(5.6, dataset, "model predictions against measurements")
        ax = figure.add_subplot()
        frame = view.frame[["campaign", "write_time", "predicted"]]  # only what is drawn
        usable = frame[frame["predicted"].notna()]
        positive = usable[usable["predicted"] > 0]
        dropped = len(usable) - len(positive)
        markers = {"train": ("o", MEASURED), "tune": ("^", TUNE)}
        for campaign, group in positive.groupby("campaign"):
            marker, colour = markers.get(str(campaign), ("s", DEFAULT))
            relative = (group["predicted"] - group["write_time"]) / group["write_time"]
            rms = float(np.sqrt(np.mean(relative**2)))
            shown = (group if len(group) <= SCATTER_POINTS
                     else group.sample(SCATTER_POINTS, random_state=0))
            sampled = (f", {len(shown)} drawn at random" if len(shown) < len(group) else "")
            ax.scatter(shown["write_time"], shown["predicted"], s=16, marker=marker,
                       color=colour, alpha=0.75, linewidths=0,
                       label=f"{campaign} runs ({len(group)}{sampled}; RMS rel. error "
                             f"{rms:.2g})")
        if not positive.empty:
            values = np.concatenate([positive["write_time"], positive["predicted"]])
            low, high = float(values.min()) / 1.5, float(values.max()) * 1.5
            line = np.geomspace(low, high, 50)
            ax.plot(line, line, color="black", linewidth=1, label="predicted = measured")
            ax.fill_between(line, line * (1 - BAND), line * (1 + BAND), color="#999999",
                            alpha=0.25, linewidth=0,
                            label=f"within \u00b1{BAND:.0%} relative error")
            inside = ((positive["predicted"] - positive["write_time"]).abs()
                      <= BAND * positive["write_time"]).mean()
            ax.set_xlim(low, high)
            ax.set_ylim(low, high)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_aspect("equal", adjustable="box")
            _log_labels(ax.xaxis)
            _log_labels(ax.yaxis)
            ax.legend(loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0.0)
            notes = [f"{inside:.0%} of {len(positive)} runs within \u00b1{BAND:.0%}"]
            if view.error_label:
                notes.append(view.error_label)
            if dropped:
                notes.append(f"{dropped} non-positive prediction(s) not shown")
            ax.set_title("; ".join(notes), fontsize=8, loc="left")
        else:
            _empty(ax, view.note or "the model predicts none of the runs")
        ax.set_xlabel("measured write time (s)")
        ax.set_ylabel("predicted write time (s)")
        return figure


def selection_figure(dataset: Dataset, view: ModelView) -> Figure:
    """RMS relative error (eq. 4 per run) after each term the selection added, in order;
    terms added by monotonicity completion are hatched."""
    with _style():
        steps = step_errors(view.model) if view.model is not None else []
        figure = _figure(1.6 + 0.34 * max(len(steps), 3), dataset,
                         "error after each model selection step")
        ax = figure.add_subplot()
        if not steps:
            _empty(ax, view.note or "no model")
            return figure
        y = np.arange(len(steps))[::-1]
        errors = [s["rms_relative_error"] or 0.0 for s in steps]
        for pos, step, error in zip(y, steps, errors, strict=True):
            completion = step["added_by"] == "completion"
            ax.barh(pos, error, color=PREDICTED if completion else MEASURED,
                    hatch="///" if completion else None, edgecolor="white", linewidth=0)
            ax.annotate(f"{error:.3g}", (error, pos), xytext=(3, 0),
                        textcoords="offset points", va="center", fontsize=7)
        ax.set_yticks(y, [f"+ {s['term']}" for s in steps])
        ax.grid(axis="y", visible=False)
        if min(errors) > 0 and max(errors) / min(errors) > 30:
            ax.set_xscale("log")
            ax.set_xlim(min(errors) / 3, max(errors) * 3)
            _log_labels(ax.xaxis)
        else:
            ax.set_xlim(0, max(errors) * 1.15 or 1.0)
        ax.set_xlabel("RMS relative error of the fit after the step (1 = 100 %)")
        handles = [Patch(color=MEASURED, label="added by greedy selection")]
        if any(s["added_by"] == "completion" for s in steps):
            handles.append(Patch(facecolor=PREDICTED, hatch="///", edgecolor="white",
                                 label="added for monotonicity"))
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncols=2,
                  frameon=False, title=f"fitted on {view.basis}", alignment="left",
                  title_fontproperties={"size": 8}, borderaxespad=0.0)
        return figure


def search_figure(dataset: Dataset, sessions: Sequence[SearchSession]) -> Figure:
    """Best-so-far bandwidth against runs, one panel per scale, one line per search; the
    default configuration's bandwidth dashed."""
    with _style():
        scales = sorted({s.cores for s in sessions})
        columns = 1 if len(scales) == 1 else 2
        rows = max(1, math.ceil(len(scales) / columns))
        figure = _figure(0.8 + 3.0 * rows, dataset, "search progress")
        axes = figure.subplots(rows, columns, squeeze=False)
        for index, ax in enumerate(axes.flat):
            if index >= len(scales):
                ax.set_visible(False)
                continue
            cores = scales[index]
            mine = [s for s in sessions if s.cores == cores]
            drawable = [s for s in mine if any(b is not None for b in s.best)]
            drawn = drawable[-SEARCH_LINES:]
            for k, session in enumerate(drawn):
                runs = np.arange(1, len(session.best) + 1)
                values = np.array([np.nan if b is None else b for b in session.best])
                ax.step(runs, values, where="post", color=f"C{k}", linewidth=1.5,
                        marker="o", markersize=3, label=session.label)
            defaults = {s.default_bandwidth for s in mine if s.default_bandwidth}
            for value in sorted(defaults)[:1]:
                ax.axhline(value, color=DEFAULT, linestyle="--", linewidth=1,
                           label=f"default {value:.4g} MiB/s")
            hidden = len(mine) - len(drawable)
            extra = ""
            if hidden:
                extra = (f" (not shown: {hidden} search{'es' if hidden > 1 else ''} that "
                         "measured only the default)")
            if len(drawn) < len(drawable):
                extra += (f" (the latest {len(drawn)} of {len(drawable)} searches; every "
                          "one is in the search table)")
            ax.set_title(f"{cores} ranks{extra}", fontsize=9)
            ax.set_xlabel("run (in search order)")
            ax.set_ylabel("best-so-far bandwidth (MiB/s)")
            ax.set_ylim(bottom=0)
            ax.xaxis.get_major_locator().set_params(integer=True)
            ax.legend(loc="lower right", framealpha=0.9)
        if not scales:
            _empty(axes.flat[0], "no tune records")
        return figure


def effects_figure(dataset: Dataset, effects: Sequence[Effect], cores: int,
                   anchor_label: str) -> Figure:
    """Predicted write time along each setting with the others at the tuned values;
    the tuned value of each setting is starred."""
    with _style():
        columns = min(3, max(1, len(effects)))
        rows = max(1, math.ceil(len(effects) / columns))
        figure = _figure(1.0 + 2.7 * rows, dataset,
                         f"parameter effects predicted by the model at {cores} ranks")
        axes = figure.subplots(rows, columns, squeeze=False)
        for index, ax in enumerate(axes.flat):
            if index >= len(effects):
                ax.set_visible(False)
                continue
            _effect_panel(ax, effects[index])
        if not effects:
            _empty(axes.flat[0], "no model")
        else:
            figure.suptitle(f"{figure.get_suptitle()}\nthe other settings at the tuned "
                            f"values {anchor_label}", fontweight="bold")
        return figure


def _effect_panel(ax: Axes, effect: Effect) -> None:
    values = list(effect.values)
    predicted = np.array([np.nan if p is None else p for p in effect.predicted])
    numeric = effect.numeric and all(isinstance(v, int | float) and v > 0 for v in values)
    positions = np.array(values, dtype=float) if numeric else np.arange(len(values), dtype=float)
    if numeric:
        ax.plot(positions, predicted, color=MEASURED, marker="o", markersize=4)
        if max(values) / min(values) > 8:
            ax.set_xscale("log")
        _sparse_ticks(ax, values, effect.setting, log=ax.get_xscale() == "log")
    else:
        ax.bar(positions, np.nan_to_num(predicted), color=MEASURED, width=0.6)
        ax.set_xticks(positions, [describe_value(effect.setting, v) for v in values])
    for pos, value, time in zip(positions, values, predicted, strict=True):
        if value == effect.anchor_value and not np.isnan(time):
            ax.plot([pos], [time], marker="*", markersize=13, color=TUNE, linestyle="none",
                    label="tuned value")
    ax.margins(x=0.08)
    ax.set_xlabel(f"{effect.setting} ({short_name(effect.setting)})", fontsize=8)
    ax.set_ylabel("predicted write time (s)")
    if any(v == effect.anchor_value for v in values):
        ax.legend(loc="best", framealpha=0.9, handletextpad=0.2)


def _sparse_ticks(ax: Axes, values: Sequence[Any], setting: str, log: bool) -> None:
    """Ticks at every value, labels only where they do not crowd the previous label."""
    ordered = sorted(values)
    span = (math.log(ordered[-1]) - math.log(ordered[0])) if log else ordered[-1] - ordered[0]
    gap = (span or 1.0) / 7
    labels, last = [], None
    for value in ordered:
        where = math.log(value) if log else value
        if last is None or where - last >= gap:
            labels.append(describe_value(setting, value))
            last = where
        else:
            labels.append("")
    ax.set_xticks(ordered, labels, rotation=45, ha="right")
    ax.minorticks_off()


def _log_labels(axis: Any) -> None:
    """Plain numbers on a log axis (0.5, 1, 2 rather than 10^0), with the 2 and 5 between
    decades labelled when the axis spans fewer than three decades."""
    low, high = axis.get_view_interval()
    few = high > 0 and low > 0 and math.log10(high / low) < 3

    def minor(value: float, _pos: int) -> str:
        digit = round(value / 10 ** math.floor(math.log10(value) + 1e-9))
        return f"{value:g}" if few and digit in (2, 5) else ""

    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
    axis.set_minor_formatter(FuncFormatter(minor))


def _empty(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])
