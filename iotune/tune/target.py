"""The target of a tune or a training campaign: which time is minimised and modelled.

``write`` (the default) is the write's open-to-close time, as in the paper; ``read`` the
read-back's; ``total`` the two added. A read or total target needs runs that time a read,
so it sets the kernel's ``access`` argument when the config leaves it out (``read`` for
``read``, ``both`` for ``total``); an ``access`` given that does not time the target is
an error, never overridden. ``access`` is a kernel argument, so part of every run's
configuration key: runs of different accesses are never taken for repetitions of each
other, in ``train`` or ``tune``.

A read or total target with a backend whose runs time no reads
(:attr:`iotune.backends.Backend.times_reads`: ``sim`` and ``replay`` model or record writes
only) is an error.
"""

from __future__ import annotations

import dataclasses

from iotune.backends import backend_class, known_backends
from iotune.config import Config, KernelConfig
from iotune.errors import ConfigError
from iotune.kernel_specs import get_kernel
from iotune.store.targets import TARGET_TABLE, TARGETS


def with_target(config: Config, target: str | None, where: str = "--target",
                backend: str | None = None) -> Config:
    """``config`` set up for ``target`` (None: the config's ``tune.target``) measured by
    ``backend`` (None: the config's).

    Sets ``tune.target`` and, for a read or total target, the kernel's ``access`` argument
    when it is not given. Raises ConfigError (one line, naming ``where`` or the key) for an
    unknown target, a backend that models writes only, a kernel without a read phase, or an
    ``access`` that does not time the target.
    """
    chosen = target if target is not None else config.tune.target
    source = where if target is not None else "tune.target"
    if chosen not in TARGETS:
        raise ConfigError(f"{source}: {chosen!r} is not one of {', '.join(TARGETS)}")
    spec = get_kernel(config.kernel.name)
    params = config.kernel.args
    given = params.get("access") if spec.has_reads else None
    if chosen != "write":
        backend = backend or config.backend.name
        if not backend_class(backend).times_reads:
            timing = [n for n in known_backends() if backend_class(n).times_reads]
            raise ConfigError(f"{source}: {chosen}: the {backend} backend models writes only "
                              "(a read target needs real runs: "
                              f"{' or '.join(f'--backend {n}' for n in timing)})")
        if not spec.has_reads:
            raise ConfigError(f"{source}: {chosen}: kernel '{spec.name}' has no read phase "
                              "(vpic and ior have one)")
    timed_by = TARGET_TABLE[chosen].timed_by
    if given is not None and given not in timed_by:
        raise ConfigError(
            f"kernel.args.access: {given!r} does not time the {chosen} target of {source} "
            f"(it needs access {' or '.join(timed_by)}; leave access out to have it "
            "set)")
    if given is None and chosen != "write":
        params["access"] = TARGET_TABLE[chosen].needs_access
        kernel = KernelConfig(config.kernel.name, tuple(params.items()))
        config = dataclasses.replace(config, kernel=kernel)
    return dataclasses.replace(config, tune=dataclasses.replace(config.tune, target=chosen))
