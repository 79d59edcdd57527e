"""Reading Darshan logs: the sample logs' contents and one clear line for every bad input."""

from __future__ import annotations

import shutil

import pytest
from darshan_helpers import (
    IOR_FPP,
    IOR_HDF5,
    MACSIO,
    NO_POSIX,
    VPIC,
    cached_files,
    cached_log,
    sample_log,
)

from iotune.darshan.logfile import read_log
from iotune.darshan.records import file_counters
from iotune.errors import DataError
from iotune.execution.files import file_sha256


def test_sample_logs_read_with_job_facts_and_counter_tables():
    log = cached_log(IOR_HDF5)
    assert log.nprocs == 4
    assert log.version == "3.21"
    assert {"POSIX", "MPI-IO", "H5F", "H5D", "DXT_POSIX", "DXT_MPIIO"} <= set(log.modules)
    posix = log.counters["POSIX"]
    assert list(posix["rank"]) == [-1]  # one record shared by all four ranks
    assert log.names[int(posix["id"].iloc[0])].endswith("test123.h5")
    assert "POSIX_F_WRITE_TIME" in posix.columns  # float counters are merged in
    assert set(log.dxt["module"]) == {"DXT_POSIX", "DXT_MPIIO"}
    traced_writes = log.dxt[(log.dxt["module"] == "DXT_POSIX") & (log.dxt["op"] == "write")]
    assert len(traced_writes) == int(posix["POSIX_WRITES"].iloc[0])
    assert log.sha256 == file_sha256(sample_log(IOR_HDF5))


def test_per_process_files_become_one_record_each():
    log = cached_log(IOR_FPP)
    files = cached_files(IOR_FPP)
    assert len(files) == log.nprocs == 2048
    assert all(f.ranks == 1 and not f.shared for f in files)


def test_hdf5_datasets_fold_into_their_file():
    log = cached_log(MACSIO)
    h5 = next(f for f in file_counters(log) if f.name.endswith(".h5"))
    assert h5.datasets == len(log.counters["H5D"])
    assert h5.h5d["H5D_BYTES_WRITTEN"] == log.counters["H5D"]["H5D_BYTES_WRITTEN"].sum()
    assert h5.mpiio and h5.posix and h5.h5f


def test_dxt_only_read_when_asked():
    assert read_log(sample_log(IOR_HDF5), dxt=False).dxt.empty
    assert not cached_log(IOR_HDF5).dxt.empty


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match=r"nope\.darshan: no such file \(expected a Darshan log\)"):
        read_log(tmp_path / "nope.darshan")


def test_directory(tmp_path):
    with pytest.raises(DataError, match="is a directory, not a Darshan log"):
        read_log(tmp_path)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.darshan"
    path.write_bytes(b"")
    with pytest.raises(DataError, match="empty file, not a Darshan log"):
        read_log(path)


@pytest.mark.parametrize("content", [b"hello, this is text\n" * 10, bytes(range(256)) * 8,
                                     b"3.21\x00\x00\x00\x00" + b"\x01" * 100])
def test_not_a_darshan_log(tmp_path, content):
    path = tmp_path / "app.darshan"
    path.write_bytes(content)
    with pytest.raises(DataError, match=r"not a Darshan log \(no Darshan 3\.x header"):
        read_log(path)


def test_truncated_log_is_named_as_such(tmp_path):
    data = sample_log(IOR_HDF5).read_bytes()
    path = tmp_path / "cut.darshan"
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(DataError, match=rf"truncated Darshan log \({len(data) // 3} bytes"):
        read_log(path)


def test_damaged_log_is_one_error_not_a_crash(tmp_path):
    path = tmp_path / "damaged.darshan"
    shutil.copy(sample_log(IOR_HDF5), path)
    data = bytearray(path.read_bytes())
    for i in range(1100, len(data)):  # the compressed regions after the header
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    with pytest.raises(DataError) as caught:
        log = read_log(path)
        log.require(("POSIX",), "a signature")
    message = str(caught.value)
    assert str(path) in message and "\n" not in message
    assert any(word in message for word in ("damaged", "cannot decode", "no POSIX records"))


def test_text_trace_where_a_binary_log_is_needed(tmp_path):
    path = tmp_path / "trace.txt"
    path.write_text("# DXT, file_id: 1, file_name: /x\n X_POSIX 0 write 0 0 8 0.1 0.2\n")
    with pytest.raises(DataError, match=r"a text DXT trace .*not a binary Darshan log"):
        read_log(path)


def test_log_without_the_needed_module_names_the_modules_it_has():
    log = cached_log(NO_POSIX)
    with pytest.raises(DataError, match=r"no POSIX or MPI-IO records; a signature needs them "
                                        r"\(modules in this log: LUSTRE, STDIO\)"):
        log.require(("POSIX", "MPI-IO"), "a signature")


def test_module_present_passes_require():
    cached_log(VPIC).require(("H5F", "POSIX"), "a signature")
