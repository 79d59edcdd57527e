"""Requested MPI-IO hints against the ones a file reports."""

from iotune.in_effect import describe_not_in_effect, hints_not_in_effect, same_hint_value


def test_values_match_as_text_or_as_integers():
    assert same_hint_value("disable", " DISABLE ")
    assert same_hint_value("4194304", "04194304")
    assert not same_hint_value("4", "1")
    assert not same_hint_value("enable", "automatic")


def test_only_hints_that_differ_or_are_absent_are_reported():
    settings = {"cb_nodes": 4, "cb_buffer_size": 4 * 2**20, "romio_cb_write": "disable",
                "stripe_count": 8, "alignment": 2**20}  # alignment is HDF5: no hint
    in_effect = {"cb_nodes": "1", "cb_buffer_size": "4194304", "romio_cb_write": "disable"}
    missing = hints_not_in_effect(settings, in_effect)
    assert missing == {"cb_nodes": ("4", "1"), "striping_factor": ("8", None)}
    assert describe_not_in_effect(missing) == \
        "cb_nodes=4 (in effect: 1), striping_factor=8 (absent)"


def test_a_run_that_read_nothing_back_reports_nothing():
    assert hints_not_in_effect({"cb_nodes": 4}, {}) == {}
