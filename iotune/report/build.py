"""``build_report``: from a store (and a tuned YAML) to figures, CSV tables and one HTML page.

Output directory layout (every name carries the kernel and backend, so measured and
simulated results never overwrite each other; when a backend's runs come from several
sources, e.g. two recorded data sets, ``<backend>`` is followed by ``-1``, ``-2``, ...)::

    index.html                         the page, images embedded, works offline
    manifest.json                      every figure and table with its title and size
    topk-<kernel>-<backend>-<cores>.png    Figures 2-4 of the paper, one per tuned scale
    speedup-<kernel>-<backend>.csv     Table 3
    model-fit-*.png, model-steps-*.png, search-*.png, effects-*.png, and a CSV per table
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.config import Config
from iotune.errors import ConfigError
from iotune.production.jobs import is_journal
from iotune.report import figures as figs
from iotune.report import tables as tabs
from iotune.report.data import (
    Dataset,
    ScaleTune,
    build_datasets,
    choose_kernel,
    kernel_counts,
    read_records,
    settings_label,
)
from iotune.report.decision import decide
from iotune.report.memory import large_blocks_mapped, return_free_memory
from iotune.report.modelfit import ModelView, fit_view, parameter_effects, predict_settings
from iotune.report.papers import PaperInputs, phases_part, similarity_part, states_part
from iotune.report.parts import Part, ReportFigure, Section, write_figure, write_table
from iotune.report.tables import Table
from iotune.store import Store
from iotune.strategies.racing import CONFIDENCE
from iotune.tuned import read_tuned_file

FORMATS = ("png", "svg")
DEFAULT_TOP = 20
ProgressFn = Callable[[str], None]


@dataclass
class DatasetReport:
    """Everything reported about one backend's data."""

    dataset: Dataset
    view: ModelView
    sections: list[Section]


@dataclass
class Report:
    """The written report: where it is and what it holds.

    ``kernel`` is None when the store held no measurements (probes only, or no store);
    ``papers`` are the parts with the seed papers' figures, after the tune data.
    """

    outdir: Path
    fmt: str
    kernel: str | None
    store: str | None
    tuned: dict[str, Any] | None
    parts: list[DatasetReport]
    papers: list[Part] = field(default_factory=list)

    @property
    def html_path(self) -> Path:
        return self.outdir / "index.html"

    def _items(self) -> list[ReportFigure | Table]:
        sections = [s for p in self.parts for s in p.sections]
        sections += [s for p in self.papers for s in p.sections]
        return [i for s in sections for i in s.items]

    @property
    def figures(self) -> list[ReportFigure]:
        return [i for i in self._items() if isinstance(i, ReportFigure)]

    @property
    def tables(self) -> list[Table]:
        return [i for i in self._items() if isinstance(i, Table)]


def read_tuned(path: Path) -> dict[str, Any]:
    """The tuned YAML as written by ``iotune tune -o``, settings in canonical form.

    ConfigError when it is missing or not a tuned configuration.
    """
    return {**read_tuned_file(path), "path": path.name}


def build_report(store_path: str | os.PathLike[str] | None, outdir: str | os.PathLike[str], *,
                 config: Config | None = None, tuned_path: Path | None = None,
                 kernel: str | None = None, fmt: str = "png", top: int = DEFAULT_TOP,
                 papers: PaperInputs | None = None,
                 progress: ProgressFn | None = None) -> Report:
    """Write the report of ``store_path`` into ``outdir`` and return what was written.

    ``config`` supplies the search space and the model's ``max_terms``/``seed`` (both are
    rebuilt from the data without it); ``tuned_path`` picks the kernel and backend shown
    first and the configuration the parameter effects are drawn around. The store's probe
    rounds give the storage-state figures; ``papers`` adds the phase timeline and the
    similarity heatmap. ``store_path`` None: no store (then ``papers`` must give a trace or
    Darshan logs).
    Raises StoreError when there is no store, DataError when there is nothing to report on
    (an empty or foreign store, no successful run of the kernel), ConfigError for a bad
    option.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if top < 1:
        raise ConfigError(f"--top: {top} is not a positive integer")
    inputs = papers or PaperInputs()
    inputs.check()
    tuned = read_tuned(tuned_path) if tuned_path is not None else None
    if store_path is None and not inputs.without_store:
        raise ConfigError("--store: no store, and neither --trace nor --darshan: nothing to "
                          "report on")
    say = progress or (lambda _message: None)
    if store_path is not None and is_journal(Store(store_path)):
        return _production_report(Store(store_path), Path(outdir), fmt, tuned, say)
    large_blocks_mapped()
    store = display_path(store_path) if store_path is not None else None
    records = read_records(store_path) if store_path is not None else None
    datasets: list[Dataset] = []
    chosen = None
    probe_count = records.probe_round_count() if records is not None else 0
    if records is not None and (kernel_counts(records) or kernel or tuned or not probe_count):
        assert store is not None
        chosen = choose_kernel(records, kernel=kernel,
                               tuned_kernel=(tuned or {}).get("kernel"),
                               config_kernel=config.kernel.name if config else None,
                               store=store)
        datasets = build_datasets(records, chosen, store,
                                  first_backend=(tuned or {}).get("backend"),
                                  first_source=_tuned_source(tuned))
        return_free_memory()  # what reading the cache left behind
    out = _make_directory(Path(outdir))
    report = Report(out, fmt, chosen, store, tuned, [])
    if probe_count or inputs.probe_backend is not None:
        # Drawn before the datasets (it is shown after them): the probe rounds are whole
        # records, read and let go before the datasets' models and figures need memory.
        say(f"probe rounds: {probe_count}; fitting the state mixture")
        part = states_part(records.probe_rounds() if records is not None else [], inputs, out,
                           fmt, say)
        if part is not None:
            report.papers.append(part)
        return_free_memory()
    while datasets:  # each let go once its part is written
        dataset = datasets.pop(0)
        say(f"{dataset.provenance.provenance} data: {dataset.provenance.runs} runs; fitting "
            "the model and drawing the figures")
        report.parts.append(_dataset_report(dataset, config, tuned, out, fmt, top, say))
        del dataset
        return_free_memory()
    if inputs.trace is not None:
        say(f"trace {inputs.trace}: finding and estimating its I/O phases")
        report.papers.append(phases_part(inputs, out, fmt))
    if inputs.darshan_logs:
        say(f"{len(inputs.darshan_logs)} Darshan log(s): signatures and their similarity")
        report.papers.append(similarity_part(inputs, out, fmt))
    return _write_page(report)


def _make_directory(out: Path) -> Path:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"-o {out}: cannot create the directory: {exc.strerror}") from None
    return out


def _write_page(report: Report) -> Report:
    """Write ``index.html`` and ``manifest.json`` of ``report``; returns it."""
    from iotune.report.html import render_html

    report.html_path.write_text(render_html(report), encoding="utf-8")
    (report.outdir / "manifest.json").write_text(
        json.dumps(manifest(report), indent=2) + "\n", encoding="utf-8")
    return report


def _production_report(store: Store, outdir: Path, fmt: str,
                       tuned: dict[str, Any] | None, say: ProgressFn) -> Report:
    """The report of a production journal: its campaigns' jobs, labelled as production
    jobs, and each configuration against the default (:mod:`iotune.report.production`)."""
    from iotune.report.production import production_part

    out = _make_directory(outdir)
    say(f"{store.path} is a production journal: its jobs and campaigns")
    report = Report(out, fmt, None, display_path(store.path), tuned, [])
    report.papers.append(production_part(store, out, fmt))
    return _write_page(report)


def display_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when it is below it, else as given."""
    relative = os.path.relpath(os.path.abspath(path))
    return relative if not relative.startswith("..") else os.fspath(path)


def manifest(report: Report) -> dict[str, Any]:
    """The report's files as plain data (``manifest.json``)."""
    return {
        "kernel": report.kernel,
        "format": report.fmt,
        "html": report.html_path.name,
        "datasets": [{"backend": p.dataset.backend, **p.dataset.provenance.pairs()}
                     for p in report.parts],
        "papers": [{"part": p.key, "title": p.title, "provenance": p.provenance}
                   for p in report.papers],
        "figures": [{"file": f.file, "title": f.title, "provenance": f.provenance,
                     "width_px": f.width_px, "height_px": f.height_px}
                    for f in report.figures],
        "tables": [{"file": t.csv_name, "title": t.title, "rows": len(t.rows)}
                   for t in report.tables],
    }


def _tuned_source(tuned: Mapping[str, Any] | None) -> str | None:
    """The source the tuned file's runs came from (None when it does not say)."""
    search = (tuned or {}).get("search")
    source = search.get("source") if isinstance(search, Mapping) else None
    return str(source) if source else None


def _dataset_report(dataset: Dataset, config: Config | None, tuned: Mapping[str, Any] | None,
                    out: Path, fmt: str, top: int, say: ProgressFn) -> DatasetReport:
    view = fit_view(dataset, config)
    tag = dataset.provenance.tag
    mine = tuned if tuned and tuned.get("backend") == dataset.backend \
        and _tuned_source(tuned) in (None, dataset.provenance.source) else None
    for tune in dataset.tunes:
        configs = [*tune.configs, *([tune.default] if tune.default else [])]
        predicted = predict_settings(view, [c.settings for c in configs], tune.cores)
        for entry, value in zip(configs, predicted, strict=True):
            entry.predicted = None if entry.is_default else value
    _label_sessions(dataset, mine)

    def figure(stem: str, fig: Any, caption: str) -> ReportFigure:
        return write_figure(out, fmt, stem, fig, caption, dataset.provenance.provenance)

    def table(item: Table) -> Table:
        return write_table(out, item)

    sections: list[Section] = []
    overview = Section("Provenance and speedups", [table(tabs.provenance_table(
        dataset, f"provenance-{tag}"))])
    decisions = [decide(tune, mine) for tune in dataset.tunes]
    if dataset.tunes:
        overview.items.append(table(tabs.speedup_table(dataset, f"speedup-{tag}", decisions)))
    else:
        overview.missing.append("No tune records in the store for this kernel and backend: "
                                "run 'iotune tune' to get speedups and the top "
                                "configurations.")
    sections.append(overview)

    if dataset.tunes:
        best = Section("Top configurations (the paper's Figures 2-4)")
        for tune, decision in zip(dataset.tunes, decisions, strict=True):
            stem = f"topk-{tag}-{tune.cores}"
            best.items.append(figure(stem, figs.topk_figure(dataset, tune, top,
                                                            view.error_label, decision),
                                     _topk_caption(tune, top)))
            best.items.append(table(tabs.topk_table(dataset, tune, top, stem,
                                                    view.error_label, decision)))
        if view.model is None:
            best.missing.append(f"No predictions: {view.note}")
        elif view.warning:
            best.missing.append(view.warning)
        sections.append(best)
        search = Section("Search progress")
        search.items.append(figure(f"search-{tag}", figs.search_figure(
            dataset, dataset.sessions), _SEARCH_CAPTION))
        search.items.append(table(tabs.search_summary_table(dataset, dataset.sessions,
                                                            f"search-summary-{tag}")))
        search.items.append(table(tabs.search_table(dataset, dataset.sessions,
                                                    f"search-{tag}")))
        sections.append(search)

    effect_rows = tabs.in_effect_table(dataset, f"in-effect-{tag}")
    if effect_rows is not None:
        sections.append(Section("Settings requested and in effect", [table(effect_rows)]))

    diagnostics = Section("Model diagnostics")
    diagnostics.notes.append(f"Model refitted on {view.basis}" + (
        f": {view.model.formula()} ({view.error_label})" if view.model is not None
        else f". {view.note}"))
    if mine and (mine.get("model") or {}).get("formula"):
        diagnostics.notes.append(f"Model recorded in {mine.get('path')} (after the search's "
                                 f"refits): {mine['model']['formula']}")
    diagnostics.items.append(figure(f"model-fit-{tag}", figs.model_fit_figure(dataset, view),
                                    _FIT_CAPTION))
    diagnostics.items.append(table(tabs.terms_table(dataset, view, f"model-terms-{tag}")))
    diagnostics.items.append(figure(f"model-steps-{tag}", figs.selection_figure(dataset, view),
                                    _STEPS_CAPTION))
    diagnostics.items.append(table(tabs.steps_table(dataset, view, f"model-steps-{tag}")))
    sections.append(diagnostics)

    if view.model is not None:
        anchor, cores, where = _anchor(dataset, view, mine)
        limits = config.system.limits if config is not None else None
        effects = parameter_effects(view, anchor, cores, limits)
        if effects:
            section = Section("Parameter effects")
            section.notes.append(f"Around {where}; {view.error_label}.")
            if view.warning:
                section.missing.append(view.warning)
            section.items.append(figure(f"effects-{tag}", figs.effects_figure(
                dataset, effects, cores, settings_label(anchor)), _EFFECTS_CAPTION))
            section.items.append(table(tabs.effects_table(dataset, effects, f"effects-{tag}")))
            sections.append(section)
    # What the page and the manifest need later is the provenance and the sections, all
    # written already: the frames (hundreds of thousands of runs) go now, not at the end.
    return DatasetReport(dataset.without_rows(), view.without_rows(), sections)


def _label_sessions(dataset: Dataset, tuned: Mapping[str, Any] | None) -> None:
    """Name the one untagged search at the tuned scale after the tuned file's strategy."""
    if not tuned:
        return
    strategy = (tuned.get("search") or {}).get("strategy")
    at_scale = [s for s in dataset.sessions if s.cores == tuned.get("cores")]
    if strategy and len(at_scale) == 1 and at_scale[0].label.startswith("search "):
        at_scale[0].label = str(strategy)


def _anchor(dataset: Dataset, view: ModelView, tuned: Mapping[str, Any] | None,
            ) -> tuple[dict[str, Any], int, str]:
    """The configuration and scale the parameter effects are drawn around, and its name."""
    if tuned is not None and tuned.get("settings") and tuned.get("cores"):
        return (dict(tuned["settings"]), int(tuned["cores"]),
                f"the tuned configuration of {tuned.get('path')} at {tuned['cores']} ranks")
    tuned_scales: list[ScaleTune] = [t for t in dataset.tunes if t.best is not None]
    if tuned_scales:
        tune = max(tuned_scales, key=lambda t: t.cores)
        assert tune.best is not None
        return (dict(tune.best.settings), tune.cores,
                f"the best searched configuration at {tune.cores} ranks (the largest tuned "
                "scale)")
    train = view.frame[view.frame["campaign"] == "train"]
    cores = int(train["cores"].max()) if not train.empty else int(view.frame["cores"].max())
    at_scale = view.frame[view.frame["cores"] == cores]
    row = at_scale.iloc[int(at_scale["write_time"].to_numpy().argmin())]
    settings = {c: row[c] for c in dataset.setting_columns() if c in row and row[c] == row[c]}
    return (settings, cores, f"the fastest measured configuration at {cores} ranks (no "
            "tune records)")


def _topk_caption(tune: ScaleTune, top: int) -> str:
    return (f"The {min(top, len(tune.configs))} fastest of the {len(tune.configs)} "
            f"configurations measured at {tune.cores} ranks, ranked by their estimated "
            f"time (as the race ranks them; whiskers: its {CONFIDENCE:.0%} interval), "
            "with the model's predicted time beside each (hatched); the default "
            "configuration (no settings) is grey, last, and dashed across the plot. Labels: "
            "c = stripe count, s = stripe size, a = aggregators (cb_nodes); settings common "
            "to all are named above the plot.")


_SEARCH_CAPTION = ("Best-so-far bandwidth (at the median time of the best configuration "
                   "so far) after each run of each search, in the order the runs were "
                   "recorded; the dashed line is the default configuration.")
_FIT_CAPTION = ("Predicted against measured write time for every run the model can predict "
                "(runs of the default configuration have no settings to predict from), on "
                "log axes; the band is the relative error band around the diagonal.")
_STEPS_CAPTION = ("The relative error (eq. 4, as RMS per run) of the fit after each term "
                  "was added, in the order the greedy selection added them; hatched terms "
                  "were added so that the model is not monotone in a tunable setting.")
_EFFECTS_CAPTION = ("The model's predicted write time along each setting it uses, with the "
                    "other settings at the tuned values (the star).")
