"""What the report reads from records: tunes per scale, searches run by run, provenance."""

from __future__ import annotations

import pytest

from iotune.backends import backend_class
from iotune.report import figures
from iotune.report.data import build_datasets, scale_tunes, search_sessions, settings_label
from iotune.report.modelfit import fit_view

MIB = 2**20


def rec(settings: dict, seconds: float, *, rep: int = 0, cores: int = 4,
        backend: str = "mpi", campaign: str = "tune", **tags) -> dict:
    return {"schema_version": 1, "campaign": campaign, "kernel": "vpic", "cores": cores,
            "settings": settings, "params": {}, "rep": rep, "backend": backend,
            "provenance": backend_class(backend).provenance,
            "system": "box", "status": "ok", "recorded_at": "2026-01-01T00:00:00+00:00",
            "result": {"times_s": {"total": seconds}, "bytes_written": 100 * MIB,
                       "bandwidth_mib_s": 100 / seconds}, **tags}


A, B, C = {"cb_nodes": 1}, {"cb_nodes": 2}, {"cb_nodes": 4}


def test_scale_tunes_rank_by_median_and_keep_the_default_apart():
    records = [rec({}, 10.0), rec({}, 12.0, rep=1), rec(A, 5.0), rec(A, 1.0, rep=1),
               rec(A, 6.0, rep=2), rec(B, 4.0), rec(B, 4.5, rep=1), rec(C, 2.0, cores=8)]
    four, eight = scale_tunes(list(enumerate(records)))
    assert (four.cores, eight.cores) == (4, 8)
    assert [c.settings for c in four.configs] == [B, A]  # medians 4.25 and 5.0 (A's min is 1)
    assert four.default is not None and four.default.median == 11.0
    assert four.speedup == pytest.approx(11.0 / 4.25)
    assert four.speedup_range == pytest.approx((10.0 / 4.5, 12.0 / 4.0))
    assert four.best is not None and four.best.bandwidth == pytest.approx(100 / 4.25)
    assert eight.default is None and eight.speedup is None


def test_best_so_far_counts_a_configuration_when_its_repetitions_are_done():
    records = [rec({}, 10.0), rec({}, 10.0, rep=1), rec(A, 2.0), rec(A, 8.0, rep=1),
               rec(B, 4.0), rec(B, 4.0, rep=1), rec(C, 1.0)]
    (session,) = search_sessions(list(enumerate(records)))
    assert session.label == "search 1" and session.default_bandwidth == pytest.approx(10.0)
    # A (median 5 s) counts after its 2nd run, B (4 s) after its 2nd, C (1 s) at the end
    assert session.best == pytest.approx([None, None, None, 20.0, 20.0, 25.0, 100.0])


def test_searches_split_by_tag_or_at_a_new_default():
    untagged = [rec({}, 10.0), rec(A, 5.0), rec({}, 10.0), rec(B, 2.0)]
    first, second = search_sessions(list(enumerate(untagged)))
    assert (first.label, second.label) == ("search 1", "search 2")
    assert first.best == [None, 20.0] and second.best == [None, 50.0]
    tagged = [rec({}, 10.0, strategy="model", tune_id="a"), rec(A, 5.0, strategy="model",
                                                               tune_id="a"),
              rec(B, 2.0, strategy="random", tune_id="b"),
              rec(C, 4.0, strategy="model", tune_id="c")]
    labels = [s.label for s in search_sessions(list(enumerate(tagged)))]
    assert labels == ["model", "random", "model (2)"]


def test_labels_follow_the_catalogue_order():
    settings = {"romio_cb_write": "disable", "cb_nodes": 8, "stripe_size": 8 * MIB,
                "stripe_count": 64}
    assert settings_label(settings) == "c=64 s=8MiB a=8 cb_write=disable"
    assert settings_label(settings, ["cb_nodes"]) == "a=8"
    assert settings_label({}) == "default"


def test_backends_are_separate_datasets_measured_first():
    records = [rec(A, 1.0, backend="sim"), rec(A, 1.0, backend="replay"), rec(A, 1.0)]
    datasets = build_datasets(records, "vpic", "store.jsonl")
    assert [d.backend for d in datasets] == ["mpi", "sim", "replay"]
    assert [d.provenance.title_word for d in datasets] == ["Measured", "Simulated", "Replayed"]
    first = build_datasets(records, "vpic", "store.jsonl", first_backend="replay")
    assert first[0].backend == "replay"


def test_replayed_figures_say_replayed():
    """Titles and footers carry the provenance (figures are built, not drawn: fast)."""
    records = [rec({"cb_nodes": n, "cb_buffer_size": b * MIB}, 1.0 + n / b, backend="replay",
                   campaign="train") for n in (1, 2, 4) for b in (1, 4, 16)]
    records += [rec({}, 3.0, backend="replay"), rec(B, 0.8, backend="replay")]
    (dataset,) = build_datasets(records, "vpic", "replayed.jsonl")
    view = fit_view(dataset, None)
    assert view.model is not None
    built = [figures.topk_figure(dataset, dataset.tunes[0], 20),
             figures.search_figure(dataset, dataset.sessions),
             figures.model_fit_figure(dataset, view), figures.selection_figure(dataset, view)]
    for figure in built:
        assert figure.get_suptitle().startswith("Replayed: ")
        assert figure.get_supxlabel().startswith("replayed (replay of data sha256 unknown) "
                                                 "on box")
        assert figures.pixel_size(figure)[0] == 1200


def _big_dataset():
    records = [rec({"cb_nodes": n, "cb_buffer_size": b * MIB}, (1.0 + n / b) * (1 + k / 100),
                   backend="sim", campaign="train", rep=k)
               for n in (1, 2, 4) for b in (1, 4, 16) for k in range(5)]
    for search in range(15):  # fifteen searches, each a default and two configurations
        tag = {"tune_id": f"t{search:02d}", "strategy": "random"}
        records += [rec({}, 3.0, backend="sim", **tag), rec(A, 2.0, backend="sim", **tag),
                    rec(B, 1.5 + search / 100, backend="sim", **tag)]
    (dataset,) = build_datasets(records, "vpic", "s.jsonl")
    return dataset


def test_predictions_in_chunks_equal_one_whole_prediction(monkeypatch):
    from iotune.report import modelfit

    dataset = _big_dataset()
    whole = fit_view(dataset, None).frame["predicted"].to_numpy()
    monkeypatch.setattr(modelfit, "PREDICT_CHUNK", 7)
    chunked = fit_view(dataset, None).frame["predicted"].to_numpy()
    assert list(map(repr, whole)) == list(map(repr, chunked))
    assert (~(whole != whole)).sum() > 40  # most rows predicted, not NaN


def test_many_searches_draw_the_latest_and_table_every_run(monkeypatch):
    from iotune.report import tables

    dataset = _big_dataset()
    monkeypatch.setattr(figures, "SEARCH_LINES", 4)
    figure = figures.search_figure(dataset, dataset.sessions)
    (ax,) = [a for a in figure.axes if a.get_visible()]
    assert len([line for line in ax.get_lines() if line.get_linestyle() != "--"]) == 4
    assert "the latest 4 of 15 searches" in ax.get_title()
    table = tables.search_table(dataset, dataset.sessions, "search")
    rows = list(table.rows)
    assert len(table.rows) == len(rows) == sum(len(s.best) for s in dataset.sessions) == 45
    assert rows[0]["search"] == dataset.sessions[0].label and rows[-1]["run"] == 3
