"""Text that iotune prints into something another program runs: one line at a time, every
value it embeds checked and quoted for where it lands.

A job script or a Python snippet is built from literal templates written in iotune's code
and from values that came from a file (a tuned YAML) or a flag. :func:`printed` is the one
place where the two meet: each value is wrapped in the kind that says where it goes
(:class:`Word` a shell word, :class:`ShellPath` a path given as shell syntax by the
user, :class:`Name` part of a variable's name, :class:`Literal` a Python literal,
:class:`Plain` text in a comment, :class:`SlurmName`, :class:`SlurmTime`,
:class:`SlurmPath` and :class:`SlurmWord` the value of an ``#SBATCH`` directive), refused
in one line (ConfigError naming where it came from) when it holds a control character or
breaks its kind's rule, and quoted so that it stays one word, one literal or one comment
line. A newline, a carriage return or a NUL is what turns a comment or a
quoted word into a second command, so none may ever be embedded.
"""

from __future__ import annotations

import re
import shlex
import string
import unicodedata
from dataclasses import dataclass
from typing import Any

from iotune.errors import ConfigError

#: Unicode categories refused in printed text: control characters (C0, DEL, C1: newline,
#: carriage return, NUL, escape...), format characters (bidirectional overrides, which
#: make a line read differently from how it runs), line and paragraph separators.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def control_characters(text: str) -> list[str]:
    """The distinct characters of ``text`` that may not be printed (see above), in order."""
    return list(dict.fromkeys(ch for ch in text
                              if unicodedata.category(ch) in _REFUSED_CATEGORIES))


def one_line(text: str, where: str) -> str:
    """``text`` when it holds no control character; ConfigError naming ``where`` otherwise."""
    bad = control_characters(text)
    if bad:
        shown = ", ".join(repr(ch) for ch in bad)
        raise ConfigError(f"{where}: {text!r} has a control character ({shown}); text that "
                          "iotune prints is one line without control characters")
    return text


def escaped(text: str) -> str:
    """``text`` on one line: each control character written as its Python escape (for
    messages that quote a value as it was given)."""
    return "".join(repr(ch)[1:-1] if unicodedata.category(ch) in _REFUSED_CATEGORIES else ch
                   for ch in text)


@dataclass(frozen=True)
class Embedded:
    """A value to embed in a printed line; ``where`` names its key or flag for errors."""

    value: Any
    where: str = "value"

    def text(self) -> str:
        """The value as it appears in the line (checked, quoted)."""
        return one_line(str(self.value), self.where)


class Plain(Embedded):
    """Text inside a comment: printed as it is, one line."""


class Word(Embedded):
    """One shell word, whatever it holds: quoted by ``shlex.quote``."""

    def text(self) -> str:
        return shlex.quote(super().text())


class Words(Embedded):
    """Several shell words (``value`` a sequence), each quoted, separated by spaces."""

    def text(self) -> str:
        return " ".join(Word(item, self.where).text() for item in self.value)


#: Longest path a :class:`ShellPath` may spell out (its literal text, in bytes): Linux's
#: ``PATH_MAX``, past which no system call takes a path, so a job given one would fail.
MAX_PATH_BYTES = 4096
#: Characters a :class:`ShellPath` may hold outside quotes as literal text: each means
#: itself to the shell wherever it stands in a word. Anything else (a space, ``;``, ``|``,
#: ``&``, ``<``, ``>``, parentheses, a backslash, a glob or brace, ``#``, ``~``, ``!``)
#: must be quoted by the user, so that what they meant is never guessed.
_UNQUOTED_LITERAL = frozenset(string.ascii_letters + string.digits + "_./+,=:@%^-")
#: A variable reference a :class:`ShellPath` keeps: ``$NAME`` or ``${NAME}``, nothing more.
_VARIABLE = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


class ShellPath(Embedded):
    """A path the user wrote as shell syntax (``--dir "$SCRATCH/out"``), printed so that
    nothing in it but the variables named is expanded when the job runs.

    The value is read, not passed through: literal text (unquoted characters of
    :data:`_UNQUOTED_LITERAL`, anything printable inside ``'...'`` or ``"..."``) and
    variable references ``$NAME`` or ``${NAME}`` (outside quotes or inside double quotes).
    It is printed again by iotune: each literal part single-quoted, each variable as
    ``"${NAME}"``, so the variable's value is taken as it is (never run, split or globbed)
    and no other expansion can happen. Refused (ConfigError naming ``where`` and the rule):
    a control character, command substitution (``$(...)``, backticks), any other ``$``
    form (``${X@P}``, ``${!X}``, ``${X:-...}``, ``$1``, ``$((...))``), a backslash, an
    unquoted shell character or space, an unclosed quote, an empty path, a path starting
    with ``-`` (an option to the command it is given to), literal text over
    :data:`MAX_PATH_BYTES`."""

    def text(self) -> str:
        text = super().text()
        parts = _path_parts(text, self.where)
        if not parts:
            raise ConfigError(f"{self.where}: {text!r} is empty; give a directory")
        literal = sum(len(value.encode()) for variable, value in parts if not variable)
        if literal > MAX_PATH_BYTES:
            raise ConfigError(f"{self.where}: {escaped(text)[:60]!r}... is {literal} bytes "
                              f"long, above {MAX_PATH_BYTES} (PATH_MAX): no command can use it")
        if not parts[0][0] and parts[0][1].startswith("-"):
            raise ConfigError(f"{self.where}: {text!r} starts with '-', which the command it "
                              f"is given to would read as an option; write ./{parts[0][1]}")
        return "".join(f'"${{{value}}}"' if variable else shlex.quote(value)
                       for variable, value in parts)


def _path_parts(text: str, where: str) -> list[tuple[bool, str]]:
    """``text`` (see :class:`ShellPath`) as (is a variable, name or literal text) parts,
    adjacent literal parts joined; ConfigError at the first thing it may not hold."""
    parts: list[tuple[bool, str]] = []

    def literal(chars: str) -> None:
        if parts and not parts[-1][0]:
            parts[-1] = (False, parts[-1][1] + chars)
        elif chars:
            parts.append((False, chars))

    def refuse(what: str) -> ConfigError:
        return ConfigError(
            f"{where}: {text!r} is not one shell word of literal text and variables "
            f"({what}); write variables as $NAME or ${{NAME}} and quote any other shell "
            "character ('a b'): no $(...), backticks, ${X...} operators, backslashes, "
            "globs or unquoted spaces, so that nothing else is expanded when the job runs")

    def variable(at: int) -> int:
        found = _VARIABLE.match(text, at)
        if not found:
            raise refuse(f"{text[at:at + 3]!r}... is not $NAME or ${{NAME}}")
        parts.append((True, found.group(1) or found.group(2)))
        return found.end()

    i = 0
    while i < len(text):
        char = text[i]
        if char == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise refuse("an unclosed quote")
            literal(text[i + 1:end])
            i = end + 1
        elif char == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                if text[i] == "$":
                    i = variable(i)
                elif text[i] in "`\\":
                    raise refuse(f"{text[i]!r} inside double quotes")
                else:
                    literal(text[i])
                    i += 1
            if i == len(text):
                raise refuse("an unclosed quote")
            i += 1
        elif char == "$":
            i = variable(i)
        elif char in _UNQUOTED_LITERAL or (not char.isascii() and not char.isspace()):
            literal(char)
            i += 1
        else:
            raise refuse(f"{char!r} outside quotes")
    return parts


_NAME = re.compile(r"[A-Za-z0-9_]+")


class Name(Embedded):
    """Part of a shell variable's name: letters, digits and ``_`` only."""

    def text(self) -> str:
        text = super().text()
        if not _NAME.fullmatch(text):
            raise ConfigError(f"{self.where}: {text!r} is not part of a variable name "
                              "(letters, digits and _ only)")
        return text


class Literal(Embedded):
    """A Python literal (``repr``) of a string, a number, a boolean or None."""

    def text(self) -> str:
        value = self.value
        if not isinstance(value, str | int | float | bool | type(None)):
            raise ConfigError(f"{self.where}: {value!r} is not a string, number or boolean")
        if isinstance(value, str):
            one_line(value, self.where)
        return repr(value)


#: Longest Slurm name (``--partition``, ``--account``, ``--qos``, a job's name) iotune
#: writes: 64 characters. Slurm documents no limit on these names and sites use a few to a
#: few dozen characters, so a longer value is a paste of something else, not a name.
MAX_SLURM_NAME = 64
_SLURM_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
#: Longest ``--time`` iotune writes: 365 days. Slurm accepts up to its ``INFINITE``, but no
#: site lets one job run for a year: a longer value is a typo (seconds given as minutes).
MAX_SLURM_TIME_S = 365 * 24 * 3600
#: Slurm's time formats (sbatch --time): ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``,
#: ``D-H:M:S``; at most 9 digits a field, which with the bound above keeps the sums small.
_SLURM_CLOCK = re.compile(r"(\d{1,9})(?::(\d{1,9}))?(?::(\d{1,9}))?")
_SLURM_DAYS = re.compile(r"(\d{1,9})-(\d{1,9})(?::(\d{1,9}))?(?::(\d{1,9}))?")
#: What else iotune writes in an ``#SBATCH`` value (counts, ``0-7``, ``B:USR1@120``):
#: characters sbatch reads as themselves (it reads quotes, backslashes and ``#`` in its
#: own way, and a space ends the value).
_SLURM_WORD = re.compile(r"[A-Za-z0-9_.:@%/+=,-]+")
#: Characters of a directory in an ``#SBATCH`` path: no ``%`` (Slurm's file name
#: patterns), no space, quote, backslash or ``#`` (see above).
_SLURM_PATH = re.compile(r"[A-Za-z0-9_./+,=@-]+")


class SlurmName(Embedded):
    """A Slurm partition, account, QOS or job name in an ``#SBATCH`` line: 1 to
    :data:`MAX_SLURM_NAME` letters, digits, ``_``, ``.`` or ``-``, not starting with ``.``
    or ``-``. Such a name needs no quoting in sbatch's reading of the line nor anywhere
    else, so it is written as it is; anything else is refused naming ``where``."""

    def text(self) -> str:
        text = str(self.value)
        if not _SLURM_NAME.fullmatch(text) or len(text) > MAX_SLURM_NAME:
            raise ConfigError(f"{self.where}: {escaped(text)[:80]!r} is not a Slurm name: 1-"
                              f"{MAX_SLURM_NAME} letters, digits, '_', '.' or '-', starting "
                              "with a letter, digit or '_'")
        return text


def slurm_time_seconds(text: str) -> int | None:
    """Seconds in a Slurm time limit written in one of sbatch's formats (``M``, ``M:S``,
    ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``), None when ``text`` is none of them."""
    days = _SLURM_DAYS.fullmatch(text)
    if days:
        d, h, m, s = (int(g) if g else 0 for g in days.groups())
        return ((d * 24 + h) * 60 + m) * 60 + s
    clock = _SLURM_CLOCK.fullmatch(text)
    if not clock:
        return None
    fields = [int(g) for g in clock.groups() if g is not None]
    if len(fields) == 3:
        return (fields[0] * 60 + fields[1]) * 60 + fields[2]
    return fields[0] * 60 + (fields[1] if len(fields) == 2 else 0)


class SlurmTime(Embedded):
    """A job's time limit (``--time``) in one of Slurm's formats, more than 0 and at most
    :data:`MAX_SLURM_TIME_S`; written as given (digits, ``-`` and ``:`` only)."""

    def text(self) -> str:
        text = str(self.value)
        seconds = slurm_time_seconds(text)
        if seconds is None or not 0 < seconds <= MAX_SLURM_TIME_S:
            raise ConfigError(f"{self.where}: {escaped(text)[:80]!r} is not a Slurm time "
                              "limit above 0 and at most 365 days: MINUTES, MINUTES:SECONDS, "
                              "HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES or "
                              "DAYS-HOURS:MINUTES:SECONDS")
        return text


class SlurmWord(Embedded):
    """Any other value of an ``#SBATCH`` directive iotune writes (a count, an array
    range, a signal): characters sbatch reads as themselves only."""

    def text(self) -> str:
        text = str(self.value)
        if not _SLURM_WORD.fullmatch(text):
            raise ConfigError(f"{self.where}: {escaped(text)[:80]!r} cannot be written in an "
                              "#SBATCH line (letters, digits and _ . : @ % / + = , - only)")
        return text


@dataclass(frozen=True)
class SlurmPath(Embedded):
    """A file ``file`` (a name of iotune's code, which may hold Slurm's ``%j`` patterns) in
    the directory ``value``, for an ``#SBATCH`` path. sbatch gives no quoting that a shell
    would read alike, so the directory must be letters, digits and ``_ . / + , = @ -``
    only; anything else (a space, ``%``, a quote, ``#``) is refused naming ``where``, with
    the way out: a directory of such characters."""

    file: str = ""

    def text(self) -> str:
        text = str(self.value)
        if not _SLURM_PATH.fullmatch(text):
            raise ConfigError(f"{self.where}: {escaped(text)[:120]!r} cannot be written in an "
                              "#SBATCH line (letters, digits and _ . / + , = @ - only); move "
                              "it to a directory whose path has none other")
        return f"{text.rstrip('/') or '/'}/{self.file}" if self.file else text


def printed(template: str, /, **values: Embedded) -> str:
    """One line: ``template`` (a literal of iotune's code, ``str.format`` syntax) with each
    field replaced by its :class:`Embedded` value's checked and quoted text. ConfigError
    naming the value's key when a value cannot be embedded safely."""
    fields = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    if "\n" in template or "\r" in template or fields != set(values):
        raise ValueError(f"template {template!r} is not one line with fields "
                         f"{sorted(values)}")
    return template.format(**{name: value.text() for name, value in values.items()})
