import yaml
from click.testing import CliRunner

from iotune.apply import load_tuned, render
from iotune.cli.main import cli

TUNED = {
    "schema_version": 1, "kernel": "vpic", "cores": 2048, "provenance": "measured",
    "settings": {"stripe_count": 64, "stripe_size": "8MiB", "cb_nodes": 64,
                 "romio_cb_write": "enable", "alignment": "1MiB"},
}


def _tuned(tmp_path, doc=TUNED):
    path = tmp_path / "tuned.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_every_format(tmp_path):
    tuned = load_tuned(_tuned(tmp_path))
    assert 'lfs setstripe -c 64 -S 8388608 "$OUTPUT_DIR"' in render(tuned, "lustre")
    romio = render(tuned, "romio")
    body = romio.split("<<'EOF'\n")[1].split("\nEOF")[0].splitlines()
    assert sorted(body) == ["cb_nodes 64", "romio_cb_write enable", "striping_factor 64",
                            "striping_unit 8388608"]
    assert 'export ROMIO_HINTS="$PWD/iotune-romio-hints"' in romio
    assert ("export MPICH_MPIIO_HINTS='*:cb_nodes=64:romio_cb_write=enable:striping_factor=64:"
            "striping_unit=8388608'") in render(tuned, "cray")
    assert "export IOR_HINT__MPI__cb_nodes=64" in render(tuned, "ior")
    h5 = render(tuned, "h5py")
    assert "info.Set('cb_nodes', '64')" in h5
    assert "fapl.set_alignment(1, 1048576)" in h5
    preload = render(tuned, "preload")
    body = preload.split("<<'EOF'\n")[1].split("\nEOF")[0].splitlines()
    assert "hint:cb_nodes=64" in body and "hdf5:alignment=1048576" in body
    assert 'export IOTUNE_SETTINGS="$PWD/iotune-preload-settings"' in preload
    assert "LD_PRELOAD=" in preload


def test_apply_cli(tmp_path):
    out = CliRunner().invoke(cli, ["apply", str(_tuned(tmp_path)), "--format", "cray"])
    assert out.exit_code == 0, out.output
    assert out.output.count("MPICH_MPIIO_HINTS") == 1


def test_apply_rejects_a_non_tuned_file(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\n")
    out = CliRunner().invoke(cli, ["apply", str(path)])
    assert out.exit_code == 2
    assert "not a tuned configuration (no 'settings' key)" in out.output
    assert "Traceback" not in out.output


def test_apply_rejects_bad_setting_values(tmp_path):
    doc = dict(TUNED, settings={"stripe_count": -3})
    out = CliRunner().invoke(cli, ["apply", str(_tuned(tmp_path, doc))])
    assert out.exit_code == 2
    assert "settings.stripe_count: -3 is not a positive integer" in out.output
