"""The tuned file's rows at the top of a report: per-file settings are shown, not dropped."""

from __future__ import annotations

from iotune.report.html import _tuned_rows
from iotune.tuned import check_tuned


def test_per_file_settings_are_shown_beside_the_settings() -> None:
    tuned = check_tuned({"recommendation": "tuned", "settings": {"cb_nodes": 2},
                         "files": {"*/ckpt_*.h5": {"cb_buffer_size": "4MiB"},
                                   "*.log": {}}})
    rows = dict(_tuned_rows(tuned))
    assert rows["settings"] == "cb_nodes=2"
    assert rows["per-file settings"] == "*/ckpt_*.h5: cb_buffer_size=4MiB; *.log: defaults"


def test_a_file_without_per_file_settings_shows_none() -> None:
    rows = dict(_tuned_rows(check_tuned({"settings": {}})))
    assert rows["settings"] == "defaults" and rows["per-file settings"] == ""
