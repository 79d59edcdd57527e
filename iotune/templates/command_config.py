"""A starter config for one's own program, from the line that launches it
(``iotune init --command "mpiexec -n 2 ./prog args"``).

The launch line gives the launcher (``mpiexec``/``mpirun`` or ``srun``), the ranks and, for
``srun -N``, the nodes; the rest is the program's command line, which becomes a command
kernel (:mod:`iotune.kernel_specs.command`). The space is one that can take effect on the
machine so described: ROMIO puts at most one aggregator on each node unless
``cb_config_list`` allows more (its default ``*:1``; docs/mpi-libraries.md measured
``cb_nodes=2`` read back as 1 on one node), so the space fixes ``cb_config_list`` to
``*:P`` (P the ranks per node) and offers ``cb_nodes`` values up to the ranks only.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from iotune.errors import ConfigError
from iotune.printable import one_line

#: The launchers a launch line may start with, by the name of its first word, and the
#: ``system.launcher`` each becomes.
LAUNCHERS = {"mpiexec": "mpiexec", "mpirun": "mpiexec", "mpiexec.hydra": "mpiexec",
             "mpiexec.mpich": "mpiexec", "mpiexec.openmpi": "mpiexec",
             "mpirun.openmpi": "mpiexec", "srun": "srun"}
#: Launcher options understood, each taking one value: what it gives.
_OPTIONS = {"-n": "ranks", "-np": "ranks", "--np": "ranks", "--ntasks": "ranks",
            "-N": "nodes", "--nodes": "nodes"}
#: At most this many cb_nodes values (1, ranks/8, ranks/4, ranks/2, ranks): a spread over
#: the range without making the training design large.
_CB_FRACTIONS = (8, 4, 2, 1)
#: A space of at most this many configurations is trained in full; a larger one by a Latin
#: hypercube of this many runs.
FULL_DESIGN_MAX = 12
#: The ``cb_buffer_size`` and ``romio_cb_write`` values the space offers beside ``cb_nodes``.
CB_BUFFER_SIZES = ("1MiB", "4MiB", "16MiB")
CB_WRITE = ("enable", "disable")


@dataclass(frozen=True)
class Launch:
    """A parsed launch line: ``system.launcher``, ranks, nodes, the program's words and the
    ``line`` as given."""

    launcher: str
    ranks: int
    nodes: int
    program: list[str]
    line: str

    @property
    def ranks_per_node(self) -> int:
        return -(-self.ranks // self.nodes)


def _count(value: str, option: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"--command: {option} {value!r} is not a positive whole number")
    return int(value)


def parse_launch(line: str) -> Launch:
    """The launch line ``line`` as a :class:`Launch`; ConfigError naming what is wrong (no
    launcher, an option not understood, no program, ranks not given)."""
    one_line(line, "--command")
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ConfigError(f"--command: {line!r}: {exc}") from None
    example = "e.g. --command 'mpiexec -n 2 ./prog args'"
    if not words or Path(words[0]).name not in LAUNCHERS:
        raise ConfigError(f"--command: {line!r} does not start with a launcher "
                          f"({', '.join(sorted(LAUNCHERS))}); give the line that runs the "
                          f"program, {example}")
    launcher = LAUNCHERS[Path(words[0]).name]
    found: dict[str, int] = {}
    rest = words[1:]
    while rest and rest[0].startswith("-"):
        option, _, value = rest[0].partition("=")
        if option not in _OPTIONS:
            raise ConfigError(f"--command: launcher option {option!r} is not understood "
                              f"(only {', '.join(_OPTIONS)}); other launcher options go in "
                              "system.launcher_template of the config written")
        if not value:
            if len(rest) < 2:
                raise ConfigError(f"--command: launcher option {option} needs a value")
            value, rest = rest[1], rest[2:]
        else:
            rest = rest[1:]
        found[_OPTIONS[option]] = _count(value, option)
    if not rest:
        raise ConfigError(f"--command: {line!r} names no program after the launcher, {example}")
    if "ranks" not in found:
        raise ConfigError(f"--command: {line!r} does not give the ranks (-n N), {example}")
    nodes = found.get("nodes", 1)
    if nodes > found["ranks"]:
        raise ConfigError(f"--command: {nodes} nodes exceed the {found['ranks']} ranks")
    return Launch(launcher, found["ranks"], nodes, rest, line)


def cb_nodes_values(ranks: int) -> list[int]:
    """``cb_nodes`` values from 1 to ``ranks`` (see :data:`_CB_FRACTIONS`)."""
    return sorted({1, *(max(1, ranks // f) for f in _CB_FRACTIONS)})


def _flow_list(words: tuple[str, ...]) -> str:
    """``words`` as a YAML flow sequence of plain scalars: ``[1MiB, 4MiB]`` (each a word
    YAML reads back as that text)."""
    return f"[{', '.join(words)}]"


def command_config(launch: Launch) -> str:
    """The text of a commented config that tunes the program ``launch`` starts (see the
    module's docstring); ``launch`` comes from :func:`parse_launch`."""
    line = launch.line
    per_node = launch.ranks_per_node
    cb_nodes = cb_nodes_values(launch.ranks)
    size = len(cb_nodes) * len(CB_BUFFER_SIZES) * len(CB_WRITE)
    design = ("design: full" if size <= FULL_DESIGN_MAX
              else f"design: lhs, runs: {FULL_DESIGN_MAX}")
    command = json.dumps(shlex.join(launch.program))  # a YAML double-quoted scalar
    return f"""\
# iotune configuration for your own program, written by 'iotune init --command' from:
#   {line}
# Relative paths are relative to this file, and the program starts in its directory.
# Full reference: docs/applications.md.
schema_version: 1

system:
  name: local                 # a label stored with every measurement
  scratch: /tmp               # each run gets a fresh directory here, {{scratch}} in the command
  {f"launcher: {launch.launcher}":<26}  # as in the line above: {launch.launcher} -n {{cores}} ...
  {f"cores_per_node: {per_node}":<26}  # {launch.ranks} ranks on {launch.nodes} node(s)
  {f"aggregators_per_node: {per_node}":<26}  # cb_nodes may not exceed nodes x this
  timeout: 10m                # a run taking longer is killed and recorded as failed

store: iotune-store.jsonl     # append-only measurements (one JSON line each)

kernel:
  # The program's command line; {{cores}}, {{nodes}} and {{scratch}} (its fresh output
  # directory) are replaced for each run. Write its output under {{scratch}} if you can.
  command: {command}
  metric: wall                # wall, io_time (preload library) or {{regex: "write: ([0-9.]+) s"}}
  preload: auto               # the preload library: hints reach the program's own MPI_Info

# Settings that can take effect here. ROMIO puts at most one aggregator on each node unless
# cb_config_list allows more ('*:1' by default), so it is fixed to '*:{per_node}' ({per_node} per
# node) and cb_nodes stays within the {launch.ranks} ranks.
space:
  cb_config_list: ["*:{per_node}"]
  cb_nodes: {json.dumps(cb_nodes)}
  cb_buffer_size: {_flow_list(CB_BUFFER_SIZES)}
  romio_cb_write: {_flow_list(CB_WRITE)}
  # alignment: [4KiB, 1MiB]          # HDF5 programs (through the preload library)
  # stripe_count: [1, 4, 16, 64]     # Lustre only
  # stripe_size: [1MiB, 4MiB, 16MiB]

train:
  repetitions: 2
  seed: 1
  scales:
    - {{cores: {launch.ranks}, {design}}}

tune:
  repetitions: 2
  statistic: median
"""
