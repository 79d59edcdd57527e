"""The catalogue of tunable I/O settings: the one place their names, layers and rules live.

One row per setting: its name (``stripe_size``), its layer (``lustre``, ``mpiio``, ``hdf5``,
``application``), its kind (how a value is parsed and checked, how it is written as a
kernel argument and how it is shown), the MPI-IO hint it becomes and the ``lfs setstripe``
option that sets it. Everything that reads or applies a setting works from these rows: the
config and ``--set`` (through :mod:`iotune.settings.values`), the kernels' argument parsers
(``kernels/kit``), the simulated system's checks (:mod:`iotune.sim`) and ``iotune apply``.

A bad value raises :class:`SettingValueError` whose message is the value and the rule
(``100000 is not a multiple of 64 KiB ...``) and nothing else; callers put the key path or
flag in front, so a value is rejected with the same words wherever it is given.

Standard library only: the kernels import this module under ``mpirun``, where nothing
heavy may load.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from iotune.settings.bounds import MAX_INTEGER
from iotune.settings.units import format_bytes, parse_bytes

HINT_PREFIX = "hint."
ENABLE_WORDS = ("enable", "disable", "automatic")
LAYERS = ("lustre", "mpiio", "hdf5", "application")
LUSTRE_STRIPE_QUANTUM = 64 * 1024

_TRUE_WORDS = ("yes", "true", "on", "1")
_FALSE_WORDS = ("no", "false", "off", "0")


class SettingValueError(ValueError):
    """A value that breaks its setting's rule. The message states the value and the rule,
    never where the value came from: the caller adds the key path or the flag."""


def parse_bool(value: Any) -> bool | None:
    """``True``/``False`` for the usual spellings (yes/no, true/false, on/off, 1/0), else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | str):
        word = str(value).strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


def _as_int(value: Any) -> int | None:
    """An integer written as int, integral float or digits (with an optional sign), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


class Kind(ABC):
    """How the values of a setting are parsed, checked, passed and shown.

    ``parse`` takes a value as a person writes it (YAML scalar, command-line text, table
    cell) and returns the canonical value or raises :class:`SettingValueError`.
    ``to_argument`` turns a canonical value into the text a kernel flag takes, and
    ``describe`` into the text a person reads.
    """

    name: ClassVar[str]
    metavar: ClassVar[str]
    numeric: ClassVar[bool] = False
    choices: tuple[str, ...] = ()

    @abstractmethod
    def parse(self, value: Any) -> Any:
        """The canonical value of ``value``; SettingValueError stating the rule otherwise."""

    def to_argument(self, value: Any) -> str:
        return str(value)

    def describe(self, value: Any) -> str:
        return str(value)


def _within_limit(number: int) -> int:
    """``number``, or SettingValueError when it is above :data:`MAX_INTEGER`."""
    if number > MAX_INTEGER:
        raise SettingValueError(f"{number} is above the limit of {MAX_INTEGER} (2**53, the "
                                "largest integer a store keeps exactly)")
    return number


@dataclass(frozen=True)
class Count(Kind):
    """An integer of at least ``minimum``."""

    name: ClassVar[str] = "count"
    metavar: ClassVar[str] = "N"
    numeric: ClassVar[bool] = True
    minimum: int = 1

    @property
    def rule(self) -> str:
        return "a positive integer" if self.minimum == 1 else f"an integer >= {self.minimum}"

    def parse(self, value: Any) -> int:
        number = _as_int(value)
        if number is None or number < self.minimum:
            raise SettingValueError(f"{value if number is None else number!r} is not {self.rule}")
        return _within_limit(number)


@dataclass(frozen=True)
class ByteSize(Kind):
    """A byte size of at least ``minimum``, optionally a multiple of ``multiple_of``.

    Accepts what :func:`iotune.settings.units.parse_bytes` reads (``4MiB``, ``64K``, ``1000000``).
    ``multiple_rule`` is the wording of the multiple rule, e.g. "64 KiB (65536 bytes),
    which Lustre requires".
    """

    name: ClassVar[str] = "bytes"
    metavar: ClassVar[str] = "BYTES"
    numeric: ClassVar[bool] = True
    minimum: int = 1
    multiple_of: int = 1
    multiple_rule: str = ""

    @property
    def rule(self) -> str:
        return "a positive byte size" if self.minimum == 1 else f"a byte size >= {self.minimum}"

    def parse(self, value: Any) -> int:
        number = _as_int(value)
        if number is not None and number < self.minimum:
            raise SettingValueError(f"{number} is not {self.rule}")
        try:
            size = parse_bytes(value)
        except ValueError as exc:
            raise SettingValueError(str(exc)) from None
        if size < self.minimum:
            raise SettingValueError(f"{size} is not {self.rule}")
        if size % self.multiple_of:
            raise SettingValueError(f"{size} is not a multiple of {self.multiple_rule}")
        return _within_limit(size)

    def describe(self, value: Any) -> str:
        return format_bytes(value) if isinstance(value, int) else str(value)


@dataclass(frozen=True)
class Choice(Kind):
    """One word of ``choices`` (case-insensitive)."""

    name: ClassVar[str] = "choice"
    metavar: ClassVar[str] = "WORD"
    choices: tuple[str, ...] = ()

    def parse(self, value: Any) -> str:
        word = value.strip().lower() if isinstance(value, str) else None
        if word not in self.choices:
            raise SettingValueError(f"{value!r} is not one of {', '.join(self.choices)}")
        return word


@dataclass(frozen=True)
class YesNo(Kind):
    """A boolean; passed to kernels as ``yes``/``no``."""

    name: ClassVar[str] = "bool"
    metavar: ClassVar[str] = "yes|no"

    def parse(self, value: Any) -> bool:
        parsed = parse_bool(value)
        if parsed is None:
            raise SettingValueError(
                f"{value!r} is not a boolean (yes/no, true/false, on/off, 1/0)")
        return parsed

    def to_argument(self, value: Any) -> str:
        return "yes" if value else "no"

    def describe(self, value: Any) -> str:
        return "yes" if value else "no"


#: What a free-form value (an MPI-IO hint, a text setting) may hold: the characters of
#: ROMIO's and Cray MPICH's hint values (numbers, words, host lists such as ``*:4`` or
#: ``n1:2,n2:2``, paths). No whitespace, quotes or shell syntax: values reach hints files
#: (``key value`` lines), environment variables and job-script lines, where a newline or
#: ``$(...)`` would be a command.
SAFE_VALUE = re.compile(r"[A-Za-z0-9_.,:=*/+-]+")
SAFE_VALUE_RULE = "letters, digits and _ . , : = * / + -"
#: What an MPI-IO hint's key may hold (it also becomes part of a variable's name, as in
#: IOR's ``IOR_HINT__MPI__<key>``).
SAFE_KEY = re.compile(r"[A-Za-z0-9_]+")


def safe_text(text: str, what: str, pattern: re.Pattern[str] = SAFE_VALUE,
              rule: str = SAFE_VALUE_RULE) -> str:
    """``text`` when every character of it is allowed; SettingValueError naming the others."""
    if not pattern.fullmatch(text):
        bad = sorted({ch for ch in text if not pattern.fullmatch(ch)})
        shown = ", ".join(repr(ch) for ch in bad)
        raise SettingValueError(f"{what} {text!r} has characters a setting cannot carry "
                                f"({shown}); allowed: {rule}")
    return text


@dataclass(frozen=True)
class Text(Kind):
    """A non-empty string of :data:`SAFE_VALUE` characters (an integer is taken as its
    digits)."""

    name: ClassVar[str] = "text"
    metavar: ClassVar[str] = "STR"

    def parse(self, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
            raise SettingValueError(f"{value!r} is not a non-empty string")
        return safe_text(str(value).strip(), "value")


@dataclass(frozen=True)
class FreeText(Kind):
    """Any string, whose owner checks it further (a user's command line, a metric): for
    arguments that never reach a hints file or a kernel flag."""

    name: ClassVar[str] = "string"
    metavar: ClassVar[str] = "TEXT"

    def parse(self, value: Any) -> str:
        if not isinstance(value, str):
            raise SettingValueError(f"{value!r} is not text")
        return value


@dataclass(frozen=True)
class Setting:
    """One tunable knob.

    ``type`` parses and checks its values; ``hint`` is the MPI-IO hint it becomes, if any;
    ``lfs_option`` the ``lfs setstripe`` option that sets it on Lustre, if any;
    ``requires`` another setting without which it means nothing (``requires_why`` says why).
    """

    name: str
    layer: str
    type: Kind
    help: str
    hint: str | None = None
    lfs_option: str | None = None
    requires: str | None = None
    requires_why: str = ""

    @property
    def kind(self) -> str:
        """``count``, ``bytes``, ``choice``, ``bool`` or ``text``."""
        return self.type.name

    @property
    def numeric(self) -> bool:
        """Whether the values are numbers (counts, byte sizes) the model can scale."""
        return self.type.numeric

    @property
    def choices(self) -> tuple[str, ...]:
        return self.type.choices

    @property
    def units(self) -> str | None:
        """``bytes`` for byte sizes, else None."""
        return "bytes" if isinstance(self.type, ByteSize) else None

    @property
    def flag(self) -> str:
        """The kernel flag: ``cb_buffer_size`` -> ``--cb-buffer-size``."""
        return "--" + self.name.replace("_", "-")

    def parse(self, value: Any) -> Any:
        """The canonical value of ``value``; SettingValueError with the rule otherwise."""
        return self.type.parse(value)

    def to_argument(self, value: Any) -> str:
        """The text of the kernel flag for a canonical value."""
        return self.type.to_argument(value)

    def describe(self, value: Any) -> str:
        """A canonical value as a person reads it (``4MiB``, ``yes``)."""
        return self.type.describe(value)


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("stripe_count", "lustre", Count(), "Lustre stripe count (OSTs per file)",
                hint="striping_factor", lfs_option="-c"),
        Setting("stripe_size", "lustre",
                ByteSize(multiple_of=LUSTRE_STRIPE_QUANTUM,
                         multiple_rule="64 KiB (65536 bytes), which Lustre requires"),
                "Lustre stripe size, a multiple of 64 KiB", hint="striping_unit",
                lfs_option="-S"),
        Setting("cb_nodes", "mpiio", Count(), "number of collective-buffering aggregators",
                hint="cb_nodes"),
        Setting("cb_buffer_size", "mpiio", ByteSize(), "collective buffer size per aggregator",
                hint="cb_buffer_size"),
        Setting("romio_cb_write", "mpiio", Choice(choices=ENABLE_WORDS),
                "collective buffering for writes: enable, disable or automatic",
                hint="romio_cb_write"),
        Setting("romio_ds_write", "mpiio", Choice(choices=ENABLE_WORDS),
                "data sieving for writes: enable, disable or automatic", hint="romio_ds_write"),
        Setting("romio_cb_read", "mpiio", Choice(choices=ENABLE_WORDS),
                "collective buffering for reads: enable, disable or automatic",
                hint="romio_cb_read"),
        Setting("romio_ds_read", "mpiio", Choice(choices=ENABLE_WORDS),
                "data sieving for reads: enable, disable or automatic", hint="romio_ds_read"),
        Setting("cb_config_list", "mpiio", Text(),
                "where aggregators may run, e.g. '*:1' (one per node) or '*:*' (ROMIO's "
                "default '*:1' caps cb_nodes at the node count)", hint="cb_config_list"),
        Setting("alignment", "hdf5", ByteSize(),
                "H5Pset_alignment: objects of at least alignment_threshold bytes start at "
                "multiples of this"),
        Setting("alignment_threshold", "hdf5", ByteSize(minimum=0),
                "H5Pset_alignment threshold (default 1 when alignment is given)",
                requires="alignment", requires_why="H5Pset_alignment"),
        Setting("sieve_buf_size", "hdf5", ByteSize(), "H5Pset_sieve_buf_size"),
        Setting("meta_block_size", "hdf5", ByteSize(minimum=0),
                "H5Pset_meta_block_size (0 turns metadata aggregation off)"),
        Setting("coll_metadata", "hdf5", YesNo(),
                "collective metadata reads and writes "
                "(H5Pset_all_coll_metadata_ops + H5Pset_coll_metadata_write)"),
        Setting("collective", "application", YesNo(),
                "collective (yes) or independent (no) data writes"),
    )
}


def settings_in_layer(layer: str) -> tuple[Setting, ...]:
    """The settings of ``layer``, in catalogue order."""
    return tuple(s for s in SETTINGS.values() if s.layer == layer)


def known_setting_names() -> list[str]:
    """Every valid setting name, for messages; ``hint.<key>`` is valid too."""
    return [*SETTINGS, HINT_PREFIX + "<key>"]


def parse_hint(key: str, value: Any) -> tuple[str, str]:
    """A free MPI-IO hint as ``(key, text)``: the key non-empty of :data:`SAFE_KEY`
    characters, the value non-empty of :data:`SAFE_VALUE` characters (booleans become
    ``true``/``false``); SettingValueError otherwise."""
    if not key:
        raise SettingValueError("hint key is empty")
    safe_text(key, "hint key", SAFE_KEY, "letters, digits and _")
    text = ("true" if value else "false") if isinstance(value, bool) else str(value).strip()
    if not text:
        raise SettingValueError(f"hint {key!r} has an empty value")
    return key, safe_text(text, "value")


def parse_setting(name: str, value: Any) -> Any:
    """The canonical value of setting ``name`` (or ``hint.<key>``); SettingValueError
    naming the rule, or the known names when ``name`` is unknown."""
    if name.startswith(HINT_PREFIX):
        return parse_hint(name[len(HINT_PREFIX):], value)[1]
    setting = SETTINGS.get(name)
    if setting is None:
        raise SettingValueError(
            f"unknown setting '{name}'; known settings: {', '.join(known_setting_names())}")
    return setting.parse(value)


def setting_argv(settings: Mapping[str, Any]) -> list[str]:
    """The kernel command-line arguments that apply canonical ``settings``."""
    argv: list[str] = []
    for name, value in settings.items():
        if name.startswith(HINT_PREFIX):
            argv += ["--hint", f"{name[len(HINT_PREFIX):]}={value}"]
        else:
            argv += [SETTINGS[name].flag, SETTINGS[name].to_argument(value)]
    return argv


def lfs_setstripe_args(settings: Mapping[str, Any]) -> list[str]:
    """The ``lfs setstripe`` options that apply the Lustre settings of canonical
    ``settings`` (``-c 4 -S 1048576``), in catalogue order; empty when there are none."""
    args: list[str] = []
    for setting in settings_in_layer("lustre"):
        if setting.name in settings and setting.lfs_option:
            args += [setting.lfs_option, setting.to_argument(settings[setting.name])]
    return args


def mpiio_hints(settings: Mapping[str, Any]) -> dict[str, str]:
    """The MPI-IO hints (ROMIO names, string values) that canonical ``settings`` stand for."""
    hints: dict[str, str] = {}
    for name, value in settings.items():
        if name.startswith(HINT_PREFIX):
            hints[name[len(HINT_PREFIX):]] = str(value)
        elif SETTINGS[name].hint:
            hints[str(SETTINGS[name].hint)] = SETTINGS[name].to_argument(value)
    return hints


def romio_hints_text(settings: Mapping[str, Any]) -> str:
    """The ROMIO hints file of canonical ``settings``: one ``key value`` line per MPI-IO
    hint (empty when there are none)."""
    return "".join(f"{key} {value}\n" for key, value in mpiio_hints(settings).items())


def cray_hints(settings: Mapping[str, Any]) -> str:
    """Cray MPICH's ``MPICH_MPIIO_HINTS`` for every file, ``*:key=value:key=value``; empty
    when ``settings`` has no MPI-IO hints."""
    hints = mpiio_hints(settings)
    return "*:" + ":".join(f"{k}={v}" for k, v in hints.items()) if hints else ""
