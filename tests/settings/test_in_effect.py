"""Requested MPI-IO hints against the ones a file reports."""

from iotune.settings.in_effect import (
    describe_not_in_effect,
    hints_not_in_effect,
    likely_reason,
    row_not_in_effect,
    same_hint_value,
    setting_effects,
)


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


def test_striping_off_lustre_is_not_applicable_and_on_lustre_read_from_the_layout():
    off = {"filesystem": {"type": "ext4", "striping": {"applicable": False,
                                                        "reason": "ext4 is not Lustre"}}}
    effect = setting_effects({"stripe_count": 4}, off)["stripe_count"]
    assert (effect.status, effect.detail) == ("not_applicable", "ext4 is not Lustre")
    layout = "stripe_count:  8 stripe_size:   1048576 pattern:       raid0 stripe_offset: -1"
    on = {"striping": {"applicable": True, "layout": layout}}
    effects = setting_effects({"stripe_count": 8, "stripe_size": 4 * 2**20}, on)
    assert effects["stripe_count"].status == "in_effect"
    assert (effects["stripe_size"].status, effects["stripe_size"].in_effect) == \
        ("differs", "1048576")


def test_hdf5_settings_are_judged_from_the_access_list_read_back():
    result = {"hdf5_settings_in_effect": {"alignment": 1048576, "alignment_threshold": 1,
                                          "coll_metadata_ops": True,
                                          "coll_metadata_write": True}}
    effects = setting_effects({"alignment": 2**20, "coll_metadata": True,
                               "sieve_buf_size": 2**16}, result)
    assert effects["alignment"].status == "in_effect"
    assert effects["coll_metadata"].status == "in_effect"
    assert effects["sieve_buf_size"].status == "unverified"  # not read back


def test_without_anything_read_back_every_setting_is_unverified():
    effects = setting_effects({"cb_nodes": 2, "stripe_count": 4}, {"times_s": {"total": 1}})
    assert {e.status for e in effects.values()} == {"unverified"}


def test_under_open_mpi_hints_read_back_are_no_evidence():
    # Open MPI's MPI_File_get_info returns the hints given, whichever layer uses them.
    echoed = {"hints_in_effect": {"cb_nodes": "2"},
              "mpi_library": "Open MPI v4.1.4, package: Debian OpenMPI"}
    ompio = setting_effects({"cb_nodes": 2}, echoed)["cb_nodes"]
    assert ompio.status == "absent"
    assert "system.mpi_io: romio" in likely_reason(ompio, echoed)
    romio = setting_effects({"cb_nodes": 2}, {**echoed, "mpi_io": "^ompio"})["cb_nodes"]
    assert romio.status == "unverified"
    # The preload library says which MPI a user's program ran with.
    program = {"hints_in_effect": {"cb_nodes": "2"},
               "preload": {"mpi_library": "Open MPI v4.1.4", "mpi_io": "romio321"}}
    assert setting_effects({"cb_nodes": 2}, program)["cb_nodes"].status == "unverified"
    mpich = {"hints_in_effect": {"cb_nodes": "2"}, "mpi_library": "MPICH Version: 4.0.2"}
    assert setting_effects({"cb_nodes": 2}, mpich)["cb_nodes"].status == "in_effect"


def test_under_open_mpi_with_romio_who_wrote_judges_collective_buffering():
    def run(writers):
        return {"mpi_library": "Open MPI v4.1.4", "mpi_io": "^ompio",
                "preload": {"file_system_writes": {"ranks_writing_mpi_io": 4,
                                                   "ranks_writing_to_files": writers}}}
    one = {"romio_cb_write": "enable", "cb_nodes": 1}
    effects = setting_effects(one, run(1))
    assert {n: e.status for n, e in effects.items()} == {"romio_cb_write": "in_effect",
                                                         "cb_nodes": "in_effect"}
    ignored = setting_effects(one, run(4))
    assert ignored["romio_cb_write"].status == "differs"
    assert (ignored["cb_nodes"].status, ignored["cb_nodes"].in_effect) == ("differs", "4")
    off = setting_effects({"romio_cb_write": "disable", "cb_buffer_size": 2**20}, run(4))
    assert off["romio_cb_write"].status == "in_effect"
    assert off["cb_buffer_size"].status == "unverified"  # who wrote says nothing of it


def test_a_stored_runs_statuses_decide_its_table_cell_over_echoed_hints():
    # Under Open MPI the hints read back are the ones given: only the stored status says
    # they were not used.
    settings = {"cb_nodes": 2, "stripe_count": 4}
    echoed = {"cb_nodes": "2"}
    cell = row_not_in_effect(settings, {"cb_nodes": "absent", "stripe_count": "not_applicable"},
                             echoed)
    assert cell == "cb_nodes=2 (absent), stripe_count=4 (not applicable)"
    assert row_not_in_effect(settings, {"cb_nodes": "in_effect"}, echoed) == ""
    # A run from before statuses were recorded: judged from its hints.
    assert row_not_in_effect({"cb_nodes": 2}, {}, {"cb_nodes": "1"}) == \
        "cb_nodes=2 (in effect: 1)"
