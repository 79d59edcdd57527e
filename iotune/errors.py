"""The one exception root of iotune.

Library code raises subclasses of :class:`IotuneError` with a message that names the
offending key or value and the rule it broke. Only the CLI turns these into a one-line
error and a non-zero exit status (a traceback only with ``--debug``).
"""

from __future__ import annotations


class IotuneError(Exception):
    """Root of every error iotune raises on purpose."""

    exit_code = 1


class ConfigError(IotuneError):
    """A configuration file, option or setting is invalid.

    The message starts with the key path, e.g. ``space.stripe_count: 0 is not a positive integer``.
    """

    exit_code = 2


class DataError(IotuneError):
    """Measurements or a model file cannot be used as given (NaN, non-positive, too few rows...)."""

    exit_code = 3


class StoreError(IotuneError):
    """The measurement store cannot be read or written."""

    exit_code = 4


class LaunchError(IotuneError):
    """A program could not be started at all (missing launcher, bad template)."""

    exit_code = 5
