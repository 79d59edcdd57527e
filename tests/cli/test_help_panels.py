"""``iotune --help`` shows the commands in panels, the main path first, with the typical
session; every command is in exactly one panel; iotune's own bad options stay one line."""

from __future__ import annotations

import importlib
import subprocess
import sys

from iotune.cli.main import COMMAND_MODULES, PANELS, all_commands
from tests.cli_result import error_line, invoke

MAIN_PATH = ("init", "run", "train", "status", "tune", "apply", "results", "report")


def test_every_command_is_in_exactly_one_panel():
    shown = [name for _, names in PANELS for name in names]
    assert sorted(shown) == sorted(all_commands())
    assert len(shown) == len(set(shown))


def test_each_command_is_loaded_from_the_module_defining_it():
    for module in set(COMMAND_MODULES.values()):
        defined = importlib.import_module(f"iotune.cli.{module}").COMMANDS
        assert {COMMAND_MODULES.get(str(c.name)) for c in defined} == {module}, module
    assert all(command.name == name for name, command in all_commands().items())


def test_the_main_path_comes_first_in_its_order():
    title, first = PANELS[0]
    assert title == "Tune"
    assert tuple(n for n in first if n in MAIN_PATH) == MAIN_PATH


def test_help_shows_the_panels_in_order_and_the_typical_session():
    result = invoke("--help")
    assert result.exit_code == 0
    text = result.output
    places = [text.index(f"─ {title} ─") for title, _ in PANELS]
    assert places == sorted(places), text
    assert text.index("Typical session:") < places[0]
    assert "iotune doctor" in text and "iotune tune --kernel vpic --cores 4" in text
    for title, names in PANELS:  # each command listed inside its own panel
        start = text.index(f"─ {title} ─")
        end = text.index("╰", start)
        for name in names:
            assert f"│ {name} " in text[start:end], (title, name)


def test_a_bad_option_of_iotune_itself_is_one_line():
    done = subprocess.run([sys.executable, "-m", "iotune", "--bogus"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr == "iotune: error: No such option '--bogus'. (see 'iotune --help')\n"
    assert done.stdout == ""


def test_an_unknown_command_is_one_line():
    result = invoke("tunes")
    assert result.exit_code == 2
    assert "No such command 'tunes'" in error_line(result)


def test_a_group_without_arguments_shows_its_help_not_an_error():
    for args, title in ((["iotune"], "─ Tune ─"), (["iotune", "store"], "Commands:")):
        done = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 2  # click's status for a group called without a command
        output = done.stdout + done.stderr
        assert "iotune: error" not in output and title in output, output
