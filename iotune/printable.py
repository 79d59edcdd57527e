"""Text that iotune prints into something another program runs: one line at a time, every
value it embeds checked and quoted for where it lands.

A job script or a Python snippet is built from literal templates written in iotune's code
and from values that came from a file (a tuned YAML) or a flag. :func:`printed` is the one
place where the two meet: each value is wrapped in the kind that says where it goes
(:class:`Word` a shell word, :class:`ShellWord` a shell word given as shell syntax by the
user, :class:`Name` part of a variable's name, :class:`Literal` a Python literal,
:class:`Plain` text in a comment), refused in one line (ConfigError naming where it came
from) when it holds a control character, and quoted so that it stays one word, one literal
or one comment line. A newline, a carriage return or a NUL is what turns a comment or a
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


#: Shell syntax a :class:`ShellWord` may not hold: command substitution (``$(``, a
#: backtick), and a process or arithmetic substitution that could run one.
_COMMAND_SYNTAX = re.compile(r"\$\(|`|[<>]\(")


class ShellWord(Embedded):
    """One shell word the user wrote as shell syntax (``--dir "$SCRATCH/out"``): variables
    and quotes are kept, but it must be exactly one word with no command in it (no command
    substitution, no ``;``, ``&``, ``|``, redirection or second word)."""

    def text(self) -> str:
        text = super().text()
        rule = ("is not one shell word without commands (variables and quotes only: no "
                "$(...), backticks, ; & | < > or unquoted spaces)")
        if _COMMAND_SYNTAX.search(text):
            raise ConfigError(f"{self.where}: {text!r} {rule}")
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:  # an unclosed quote
            raise ConfigError(f"{self.where}: {text!r} {rule}") from None
        if len(tokens) != 1 or _only_punctuation(tokens[0], lexer.punctuation_chars):
            raise ConfigError(f"{self.where}: {text!r} {rule}")
        return text


def _only_punctuation(token: str, punctuation: str) -> bool:
    return bool(token) and all(ch in punctuation for ch in token)


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


def printed(template: str, /, **values: Embedded) -> str:
    """One line: ``template`` (a literal of iotune's code, ``str.format`` syntax) with each
    field replaced by its :class:`Embedded` value's checked and quoted text. ConfigError
    naming the value's key when a value cannot be embedded safely."""
    fields = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    if "\n" in template or "\r" in template or fields != set(values):
        raise ValueError(f"template {template!r} is not one line with fields "
                         f"{sorted(values)}")
    return template.format(**{name: value.text() for name, value in values.items()})
