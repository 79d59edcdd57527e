"""The search interface: strategies propose configurations, a context measures them.

A strategy sees the candidate configurations at the target scale and asks the
:class:`SearchContext` to evaluate some; the context measures through the backend (with
repetitions, reusing what the store already holds), records everything, charges the budget
(one unit per configuration evaluated) and keeps the best-so-far history. So every strategy
is compared at equal budgets, whatever backend measures.
"""

from __future__ import annotations

import math
import statistics
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from iotune.errors import ConfigError
from iotune.settings.bounds import MAX_INTEGER
from iotune.settings.numbers import LIMITS_DOC, shown

if TYPE_CHECKING:
    import pandas as pd

    from iotune.store.records import Measurement

Configuration = dict[str, Any]
#: How a configuration's repeated times become one figure (``tune.statistic``).
STATISTICS: dict[str, Callable[[Sequence[float]], float]] = {
    "median": statistics.median,
    "mean": statistics.fmean,
    "min": min,
}


@dataclass
class Evaluation:
    """All measurements of one configuration at the target scale."""

    settings: Configuration
    key: str
    times: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    bandwidths: list[float] = field(default_factory=list)
    predicted: float | None = None
    statistic: float | None = None
    order: int = 0
    states: list[str] = field(default_factory=list)
    #: The measurements behind ``times`` and ``failures`` (contexts that keep them).
    measurements: list[Measurement] = field(default_factory=list, repr=False)

    def summarise(self, how: str) -> None:
        self.statistic = STATISTICS[how](self.times) if self.times else None


class SearchContext(ABC):
    """What a strategy may use: the candidates, evaluation under a budget, training data.

    :class:`iotune.tune.MeasuringContext` is the one ``tune``, the benchmarks and most tests
    use; a subclass fills in :meth:`key` and :meth:`_measure`.
    """

    #: The kernel searched, for messages.
    kernel: str = "?"
    #: The time minimised and modelled (:mod:`iotune.store.targets`).
    target: str = "write"

    def __init__(self, candidates: Sequence[Configuration], budget: int | None) -> None:
        self.candidates = list(candidates)
        self.budget = budget
        self.evaluations: dict[str, Evaluation] = {}
        self.best_so_far: list[float] = []
        #: Extra runs of configurations already evaluated (the race), charged to the budget.
        self.remeasured = 0
        #: Settings shown to change nothing on this system: name -> (the one value still
        #: searched, why). See :meth:`ignore_setting`.
        self.ignored: dict[str, tuple[Any, str]] = {}

    @property
    def spent(self) -> int:
        """Budget units used: configurations evaluated plus extra runs."""
        return len(self.evaluations) + self.remeasured

    @property
    def remaining(self) -> int | None:
        """Budget units left (None: no limit); a configuration or an extra run costs one."""
        return None if self.budget is None else max(0, self.budget - self.spent)

    @property
    def exhausted(self) -> bool:
        return self.remaining == 0

    @abstractmethod
    def key(self, settings: Mapping[str, Any]) -> str:
        """The store key of ``settings`` at the target scale."""

    @abstractmethod
    def _measure(self, settings: Configuration, evaluation: Evaluation) -> None:
        """Fill ``evaluation`` with measurements (times, failures)."""

    def _measure_again(self, evaluation: Evaluation) -> None:
        """Add one more run of ``evaluation``'s configuration to it."""
        raise NotImplementedError(f"{type(self).__name__} cannot measure a configuration again")

    def remeasure(self, evaluation: Evaluation) -> bool:
        """Run ``evaluation``'s configuration once more, charging one unit of the budget.

        Returns False (and runs nothing) when the budget is spent.
        """
        if self.exhausted:
            return False
        self._measure_again(evaluation)
        self.remeasured += 1
        return True

    def ignore_setting(self, name: str, value: Any, why: str) -> None:
        """Stop varying setting ``name``: from now on every configuration is measured (and
        keyed, :meth:`equivalent`) with ``value`` for it, since no value of it changes
        anything here. Candidates that differ only in it become one; a strategy sees the
        one already measured as known."""
        self.ignored.setdefault(name, (value, why))

    def equivalent(self, settings: Mapping[str, Any]) -> Configuration:
        """``settings`` with every ignored setting it has at the value still searched."""
        if not self.ignored:
            return dict(settings)
        return {k: self.ignored[k][0] if k in self.ignored else v for k, v in settings.items()}

    def evaluate(self, configs: Sequence[Configuration]) -> list[Evaluation]:
        """Evaluate ``configs`` in order until the budget runs out; known ones cost nothing
        (a configuration that differs from a known one only in ignored settings is known)."""
        out = []
        for settings in map(self.equivalent, configs):
            key = self.key(settings)
            if key in self.evaluations:
                out.append(self.evaluations[key])
                continue
            if self.exhausted:
                break
            evaluation = Evaluation(dict(settings), key, order=len(self.evaluations) + 1)
            self._measure(dict(settings), evaluation)
            self.evaluations[key] = evaluation
            best = self.best()
            if best is not None and best.statistic is not None:
                self.best_so_far.append(best.statistic)
            out.append(evaluation)
        return out

    def measure_baseline(self, settings: Configuration | None = None) -> Evaluation:
        """Measure ``settings`` (default: none, what the system gives) outside the budget and
        the evaluations: the baseline a search is compared with (order 0)."""
        chosen = dict(settings or {})
        evaluation = Evaluation(chosen, self.key(chosen), order=0)
        self._measure(dict(chosen), evaluation)
        return evaluation

    def best(self) -> Evaluation | None:
        """The evaluated configuration with the lowest statistic (time), if any succeeded."""
        done = [e for e in self.evaluations.values() if e.statistic is not None]
        return min(done, key=lambda e: e.statistic or 0.0) if done else None

    def training_frame(self) -> pd.DataFrame | None:
        """Measurements to fit a model on (training campaign and this search), if any."""
        return None

    def candidate_frame(self) -> pd.DataFrame:
        """The candidates as a DataFrame with the target scale's ``cores`` column."""
        raise NotImplementedError


@dataclass(frozen=True)
class StrategyOption:
    """One option of a strategy: its default, its help line and the rule its values obey.

    The kind of value follows the default: an integer default takes integers, a float
    default numbers, a text default one of ``choices``. ``minimum`` and ``maximum`` bound
    numbers (inclusive; ``above`` makes the minimum exclusive); an integer option without
    a ``maximum`` is still bounded by :data:`~iotune.settings.bounds.MAX_INTEGER`, and a
    number is always finite. An option whose default is text but which also takes integers
    (``auto`` or a count) lists the words in ``choices`` and sets ``integer``.
    """

    name: str
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    above: bool = False
    choices: tuple[str, ...] = ()
    integer: bool = False

    def check(self, value: Any) -> None:
        """ConfigError naming the option, the value and the rule when ``value`` breaks it."""
        if value in self.choices:
            return
        rule = self.rule()
        takes_int = self.integer or (isinstance(self.default, int)
                                     and not isinstance(self.default, bool))
        if takes_int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(self.default, float):
            ok = (isinstance(value, int | float) and not isinstance(value, bool)
                  and math.isfinite(value))
        else:
            ok = not self.choices  # text with no choices: the strategy checks it
        if ok and self.minimum is not None:
            ok = value > self.minimum if self.above else value >= self.minimum
        if ok and self.maximum is not None:
            ok = value <= self.maximum
        if not ok:
            raise ConfigError(f"--option {self.name}: {value!r} is not {rule}")
        if takes_int and value > MAX_INTEGER:
            raise ConfigError(f"--option {self.name}: {value} is above the limit of "
                              f"{MAX_INTEGER} ({LIMITS_DOC})")

    def rule(self) -> str:
        """The rule in words: ``an integer >= 1``, ``a number in [0, 1]``, ``one of ...``."""
        takes_int = self.integer or (isinstance(self.default, int)
                                     and not isinstance(self.default, bool))
        kind = "an integer" if takes_int else "a number"
        if self.minimum is not None and self.maximum is not None:
            bounds = f" in [{shown(self.minimum)}, {shown(self.maximum)}]"
        elif self.minimum is not None:
            bounds = f" {'>' if self.above else '>='} {shown(self.minimum)}"
        else:
            bounds = ""
        words = " or ".join(repr(c) for c in self.choices)
        if self.choices and not takes_int:
            return f"one of {', '.join(self.choices)}"
        return f"{kind}{bounds}" + (f" or {words}" if words else "")


class Strategy(ABC):
    """A search algorithm. Subclasses list their options with defaults and docs."""

    name: ClassVar[str] = ""
    options: ClassVar[tuple[StrategyOption, ...]] = ()

    def __init__(self, **values: Any) -> None:
        known = {o.name for o in self.options}
        unknown = set(values) - known
        if unknown:
            raise ConfigError(f"strategy {self.name}: unknown option(s) {sorted(unknown)}; "
                              f"known: {', '.join(sorted(known)) or 'none'}")
        for option in self.options:
            if option.name in values:
                option.check(values[option.name])
        self.values = {o.name: values.get(o.name, o.default) for o in self.options}
        self.notes: dict[str, Any] = {}

    def default_budget(self) -> int | None:
        """Budget units to spend when neither the command nor the config gives a budget;
        None: search until the strategy stops by itself."""
        return None

    def prepare(self, context: SearchContext) -> None:  # noqa: B027 (optional hook)
        """Raise before anything is measured when the search cannot run in ``context``."""

    @abstractmethod
    def search(self, context: SearchContext) -> None:
        """Evaluate configurations through ``context`` until done or out of budget."""


_REGISTRY: dict[str, type[Strategy]] = {}


def register_strategy(cls: type[Strategy]) -> type[Strategy]:
    _REGISTRY[cls.name] = cls
    return cls


def known_strategies() -> list[str]:
    return sorted(_REGISTRY)


def strategy_class(name: str) -> type[Strategy]:
    """The strategy class called ``name``; ConfigError listing the known ones otherwise."""
    if name not in _REGISTRY:
        raise ConfigError(f"--strategy: unknown strategy '{name}'; known strategies: "
                          f"{', '.join(known_strategies())}")
    return _REGISTRY[name]


class TuneOptions(Protocol):
    """What :func:`resolve_options` reads of a config's ``tune:`` section: the options it
    sets per strategy and its seed. :class:`iotune.config.TuneConfig` is one; the
    strategies, below the config, do not import it."""

    @property
    def seed(self) -> int: ...

    def options_for(self, strategy: str) -> dict[str, Any]: ...


def resolve_options(tune_cfg: TuneOptions, strategy: str,
                     given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The options ``strategy`` runs with, beyond its own defaults: ``tune.options`` of the
    config, ``tune.seed`` for a strategy with a ``seed`` option, then ``given`` (``--option``)
    over both."""
    options = tune_cfg.options_for(strategy)
    if any(o.name == "seed" for o in strategy_class(strategy).options):
        options.setdefault("seed", tune_cfg.seed)
    options.update(given or {})
    return options


def make_strategy(name: str, **options: Any) -> Strategy:
    """The strategy called ``name`` with ``options`` over its defaults; ConfigError for an
    unknown strategy or option."""
    return strategy_class(name)(**options)


def strategy_help() -> str:
    """A table of every strategy's options, for ``--help`` and docs."""
    lines = []
    for name in sorted(_REGISTRY):
        cls = _REGISTRY[name]
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        lines.append(f"{name}: {doc}")
        lines += [f"    {o.name} (default {o.default}): {o.help}" for o in cls.options]
    return "\n".join(lines)
