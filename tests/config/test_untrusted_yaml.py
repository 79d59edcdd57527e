"""The reader of user-named files (iotune.inputs): YAML within its nesting, alias and size
limits, and special files refused before they are opened for reading.

Every refusal here is decided from a file's status or while the YAML is scanned, before a
document is built: the over-size files are sparse, so reading one would take minutes and
gigabytes; the named pipes have no writer, so opening one to read would block for ever
(a thread with a join timeout guards against that).
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from iotune import inputs
from iotune.errors import ConfigError, DataError
from iotune.inputs import (
    MAX_YAML_BYTES,
    MAX_YAML_DEPTH,
    YamlLimitError,
    load_yaml,
    parse_yaml,
    read_bytes,
    read_text,
    safe_load,
)

REPO = Path(__file__).resolve().parents[2]


def billion_laughs(key: str, levels: int = 9) -> str:
    """``key:`` holding anchors that repeat the one before ten times, ``levels`` deep
    (10**levels values once expanded)."""
    lines = [f"{key}:", "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        lines.append(f"  l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 10)}]")
    return "\n".join(lines) + "\n"


def nested_flow(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def nested_block(depth: int) -> str:
    """A block mapping ``depth`` levels deep, one space of indent a level."""
    levels = "".join(" " * level + "a:\n" for level in range(depth - 1))
    return levels + " " * (depth - 1) + "a: 1\n"


def finishes(call: Callable[[], Any], seconds: float = 60) -> Any:
    """What ``call()`` returns or raises, run in a thread that must end within ``seconds``
    (a guard against a blocking read, not a measure of speed)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the read blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


# -- documents within the limits read as yaml.safe_load reads them ---------------------


@pytest.mark.parametrize("path", sorted([*REPO.glob("configs/*.yaml"),
                                         *REPO.glob("iotune/sim/*/*.yaml"),
                                         REPO / "iotune/templates/iotune.yaml"]),
                         ids=lambda p: p.name)
def test_shipped_yaml_reads_as_safe_load_reads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert safe_load(text) == yaml.safe_load(text)


def test_aliases_and_merge_keys_within_the_limit_read_as_written() -> None:
    text = ("base: &base {cb_nodes: 2, striping_factor: 4}\n"
            "one: {<<: *base, cb_nodes: 8}\n"
            "two: *base\n"
            "list: &l [1, 2]\n"
            "again: [*l, *l]\n")
    assert safe_load(text) == yaml.safe_load(text)
    assert safe_load(text)["one"] == {"cb_nodes": 8, "striping_factor": 4}


def test_nesting_up_to_the_limit_reads() -> None:
    value = safe_load(nested_flow(MAX_YAML_DEPTH - 1))
    for _ in range(MAX_YAML_DEPTH - 1):
        value = value[0]
    assert value == 1
    assert safe_load(nested_block(MAX_YAML_DEPTH - 1)) is not None


# -- nesting ----------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    nested_flow(MAX_YAML_DEPTH + 1),
    "[" * 100_000,
    "{a: " * 50_000,
    "best_found:\n" + "".join(" " * (level + 1) + "a:\n" for level in range(3000)),
    "best_found: [" + "{a: [" * 200,
    "- " * 200 + "1\n",
], ids=["limit+1", "flow-list-100000", "flow-map-50000", "block-3000", "mixed", "block-list"])
def test_deep_nesting_is_refused_not_a_recursion_error(text: str) -> None:
    with pytest.raises(YamlLimitError, match=f"nested deeper than {MAX_YAML_DEPTH} levels"):
        safe_load(text)


def test_the_depth_refusal_names_the_key_it_is_under() -> None:
    with pytest.raises(YamlLimitError) as info:
        safe_load("kernel: vpic\nbest_found:\n  settings: " + "{a: " * 100)
    assert str(info.value).startswith("best_found.settings")


# -- aliases ----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["measured", "settings", "kernel_args"])
def test_billion_laughs_is_refused_under_any_key(key: str) -> None:
    with pytest.raises(YamlLimitError, match="more than 100000 values") as info:
        finishes(lambda: safe_load(billion_laughs(key)))
    assert str(info.value).startswith(f"{key}.l")


def test_aliases_count_what_they_repeat(monkeypatch: pytest.MonkeyPatch) -> None:
    # Written: the top mapping, keys a and b, a's list and its 3 items, b's list (8).
    # Each *a stands for a's list and its items (4): 16 in all.
    text = "a: &a [1, 2, 3]\nb: [*a, *a]\n"
    monkeypatch.setattr(inputs, "MAX_YAML_VALUES", 16)
    assert safe_load(text) == {"a": [1, 2, 3], "b": [[1, 2, 3], [1, 2, 3]]}
    monkeypatch.setattr(inputs, "MAX_YAML_VALUES", 15)
    with pytest.raises(YamlLimitError, match=r"^b\[1\] \(line 2\): .* more than 15 values"):
        safe_load(text)


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(YamlLimitError, match=r"alias \*a inside its own anchor"):
        safe_load("a: &a [1, *a]\n")


def test_limit_errors_are_yaml_errors_and_other_errors_are_unchanged() -> None:
    assert issubclass(YamlLimitError, yaml.YAMLError)
    with pytest.raises(yaml.MarkedYAMLError):
        safe_load("a: [\n")
    with pytest.raises(yaml.composer.ComposerError, match="undefined alias"):
        safe_load("a: *nope\n")


def test_parse_yaml_names_the_source_in_the_callers_error_class() -> None:
    with pytest.raises(DataError, match=r"^m\.yaml: measured\.l\d.* more than 100000 values"):
        parse_yaml(billion_laughs("measured"), "m.yaml", DataError)
    with pytest.raises(ConfigError, match=r"^c\.yaml: the document \(line 1\): nested deeper"):
        parse_yaml("[" * 1000, "c.yaml")


# -- size -------------------------------------------------------------------------------


def test_an_over_size_yaml_file_is_refused_from_its_size_alone(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    with path.open("wb") as handle:  # sparse: reading it whole would take gigabytes
        handle.truncate(8 * 2**30)
    with pytest.raises(ConfigError) as info:
        load_yaml(path, "tuned file")
    assert str(info.value) == (f"{path}: tuned file is {8 * 2**30} bytes, over the limit of "
                               "4 MiB for a tuned file")


def test_a_yaml_file_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    head = "settings: {}\nreason: "
    path.write_text(head + "x" * (MAX_YAML_BYTES - len(head)))
    assert path.stat().st_size == MAX_YAML_BYTES
    assert load_yaml(path, "tuned file")["reason"] == "x" * (MAX_YAML_BYTES - len(head))
    path.write_text(head + "x" * (MAX_YAML_BYTES - len(head) + 1))
    with pytest.raises(ConfigError, match="over the limit of 4 MiB"):
        load_yaml(path, "tuned file")


def test_other_inputs_have_their_own_larger_limit(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    with path.open("wb") as handle:
        handle.truncate(inputs.MAX_INPUT_BYTES + 1)
    with pytest.raises(DataError, match=r"over the limit of 512 MiB for a CSV file"):
        inputs.read_csv(path)
    small = tmp_path / "small.bin"
    small.write_bytes(b"abc")
    assert read_bytes(small, "file", limit=3) == b"abc"
    with pytest.raises(ConfigError, match="is 3 bytes, over the limit of 2 bytes"):
        read_bytes(small, "file", limit=2)


def test_an_over_size_text_trace_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from iotune.darshan.trace import read_trace

    path = tmp_path / "trace.txt"
    with path.open("wb") as handle:  # a DXT text dump's head, then sparse bytes
        handle.write(b"# darshan log version: 3.41\n# DXT, file_id: 1, file_name: /o/a\n")
        handle.truncate(inputs.MAX_INPUT_BYTES + 1)
    with pytest.raises(DataError, match=r"trace\.txt: DXT trace is \d+ bytes, over the "
                                        r"limit of 512 MiB for a DXT trace"):
        read_trace(path)


def test_json_nested_past_the_decoder_is_the_callers_error() -> None:
    from iotune.execution.runner import parse_result

    with pytest.raises(DataError, match=r"^r\.json: JSON nested too deeply to read$"):
        inputs.parse_json("[" * 100_000, "r.json")
    with pytest.raises(DataError, match=r"^r\.json: not JSON"):
        inputs.parse_json("{", "r.json")
    assert inputs.parse_json('{"a": [1]}', "r.json") == {"a": [1]}
    # a program's output line nested past the decoder is no result, not a crash
    assert parse_result('{"a": ' + "[" * 100_000 + "\n") is None


# -- files that are not regular files ---------------------------------------------------


def test_a_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "t.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError) as info:
        finishes(lambda: load_yaml(fifo, "tuned file"))
    assert str(info.value) == (f"{fifo}: is a named pipe (FIFO), not a regular file; a tuned "
                               "file must be a regular file")
    with pytest.raises(DataError, match="named pipe"):
        finishes(lambda: inputs.read_csv(fifo))


def test_a_device_is_refused() -> None:
    with pytest.raises(ConfigError, match="/dev/zero: is a character device"):
        finishes(lambda: read_text("/dev/zero", "config file"))


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        with pytest.raises(ConfigError, match=r"s: is a socket, not a regular file"):
            read_text(path, "config file")
    finally:
        server.close()


def test_missing_and_directory_keep_their_messages(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: config file not found$"):
        read_text(tmp_path / "nope.yaml", "config file")
    with pytest.raises(ConfigError, match=r": is a directory, not a config file$"):
        read_text(tmp_path, "config file")
