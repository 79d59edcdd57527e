"""Optuna's TPE sampler as a search strategy: what a user would reach for instead of iotune.

A comparison baseline, not a replacement for the model-guided search. Each setting becomes
a categorical parameter whose choices are the distinct values it takes among the
candidates (a setting with a single value is held fixed). The search runs Optuna's
ask-and-tell loop on a minimising study:

1. The first ``startup`` trials are random *valid* candidates (seeded, without repeats),
   enqueued into the study so TPE learns from them; the sampler's ``n_startup_trials`` is the
   same number, so TPE models only after them.
2. Then each trial is proposed by TPE (Optuna's defaults otherwise). A proposal that is not a
   candidate (it breaks a rule of the space, e.g. more aggregators than this scale allows,
   or was not recorded by a replay backend) is told as PRUNED without spending budget; TPE
   ranks pruned trials below every completed one, so it learns to avoid them. A proposal
   already evaluated is told its cached statistic, again free. A failed measurement (every
   repetition failed) is told as PRUNED.
3. After ``max_invalid`` consecutive proposals that spent no budget (invalid or already
   evaluated), the next trial is a random unevaluated candidate instead, so the search
   always progresses.

It stops when the budget is spent or every candidate has been evaluated. Optuna is imported
only when the search starts (``pip install 'iotune[tpe]'``); its log messages below warnings
are silenced for the duration of the search.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

from iotune.errors import ConfigError
from iotune.strategies.base import (
    Configuration,
    Evaluation,
    SearchContext,
    Strategy,
    StrategyOption,
    register_strategy,
)

Frozen = tuple[tuple[str, Any], ...]


@register_strategy
class TPE(Strategy):
    """Optuna's TPE sampler over each setting's values, ask/tell (needs optuna)."""

    name = "tpe"
    options = (
        StrategyOption("seed", 0, "random seed (startup draws and the TPE sampler)"),
        StrategyOption("startup", 10, "random valid candidates run before TPE proposes "
                                      "(Optuna's n_startup_trials)"),
        StrategyOption("max_invalid", 20, "consecutive free proposals (invalid or already "
                                          "evaluated) before a random new candidate is run"),
    )

    def search(self, context: SearchContext) -> None:
        """Evaluate TPE's proposals through ``context`` until the budget or space runs out.

        Sets ``notes``: ``trials`` (asked), ``measured`` (new configurations evaluated),
        ``invalid`` (proposals not among the candidates), ``repeats`` (proposals already
        evaluated) and ``fallbacks`` (random candidates run after ``max_invalid`` free
        proposals in a row). Raises ConfigError when optuna is not installed.
        """
        optuna = import_optuna()
        candidates = context.candidates
        self.notes.update(trials=0, measured=0, invalid=0, repeats=0, fallbacks=0)
        if not candidates:
            return
        seed, startup = int(self.values["seed"]), int(self.values["startup"])
        max_invalid = max(1, int(self.values["max_invalid"]))
        choices = setting_choices(candidates)
        varying = [n for n, values in choices.items() if len(values) > 1]
        fixed = {n: values[0] for n, values in choices.items() if len(values) == 1}
        index = {frozen(c): c for c in candidates}
        remaining = {context.key(c) for c in candidates} - set(context.evaluations)
        order = iter(np.random.default_rng(seed).permutation(len(candidates)).tolist())

        def next_random() -> Configuration | None:
            for i in order:
                if context.key(candidates[i]) not in context.evaluations:
                    return candidates[i]
            return None

        with quiet(optuna):
            state = optuna.trial.TrialState
            sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup)
            study = optuna.create_study(direction="minimize", sampler=sampler)
            idle = 0
            while remaining and not context.exhausted:
                if self.notes["measured"] < startup or idle >= max_invalid:
                    forced = next_random()
                    if forced is None:
                        break
                    study.enqueue_trial({n: _plain(forced.get(n)) for n in varying})
                    if idle >= max_invalid:
                        self.notes["fallbacks"] += 1
                    idle = 0
                trial = study.ask()
                self.notes["trials"] += 1
                params = {n: trial.suggest_categorical(n, choices[n]) for n in varying}
                config = index.get(frozen({**fixed, **params}))
                if config is None:
                    study.tell(trial, state=state.PRUNED)
                    self.notes["invalid"] += 1
                    idle += 1
                    continue
                key = context.key(config)
                if key in context.evaluations:
                    _tell(study, trial, context.evaluations[key], state)
                    self.notes["repeats"] += 1
                    idle += 1
                    continue
                done = context.evaluate([config])
                if not done:  # the context refused: out of budget
                    study.tell(trial, state=state.FAIL)
                    break
                _tell(study, trial, done[0], state)
                self.notes["measured"] += 1
                remaining.discard(key)
                idle = 0
        self.notes["study"] = study


def import_optuna() -> ModuleType:
    """The optuna module; ConfigError saying how to install it when it is missing."""
    try:
        import optuna
    except ImportError:
        raise ConfigError("--strategy tpe: needs optuna (pip install 'iotune[tpe]')") from None
    return optuna


@contextmanager
def quiet(optuna: ModuleType) -> Iterator[None]:
    """Optuna logs warnings and errors only, and no experimental-feature warnings, inside."""
    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            yield
    finally:
        optuna.logging.set_verbosity(level)


def setting_choices(candidates: Sequence[Configuration]) -> dict[str, list[Any]]:
    """Each setting's distinct values among ``candidates``, in order of first appearance.

    ``None`` is a choice of a setting that some candidates leave unset.
    """
    names = list(dict.fromkeys(n for c in candidates for n in c))
    return {n: list(dict.fromkeys(_plain(c.get(n)) for c in candidates)) for n in names}


def frozen(settings: Configuration) -> Frozen:
    """A hashable form of ``settings`` that ignores key order and unset (None) settings."""
    return tuple(sorted((k, v) for k, v in settings.items() if v is not None))


def _plain(value: Any) -> Any:
    """Numpy scalars as Python ones (Optuna's categorical choices must be plain)."""
    return value.item() if isinstance(value, np.generic) else value


def _tell(study: Any, trial: Any, evaluation: Evaluation, state: Any) -> None:
    if evaluation.statistic is None:
        study.tell(trial, state=state.PRUNED)
    else:
        study.tell(trial, float(evaluation.statistic))
