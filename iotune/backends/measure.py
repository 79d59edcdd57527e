"""One configuration measured on purpose (``iotune run``): the request checked as a tune
would check it, then its repetitions measured and each recorded as it ends.

The command line only parses and prints; what a run of one configuration means lives here,
so a script gets the same checks and the same records as the command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from iotune.backends.base import Backend, RunRequest
from iotune.config import Config
from iotune.execution import interrupt
from iotune.kernel_specs import get_kernel
from iotune.settings.space import check_configuration
from iotune.settings.values import normalise_settings
from iotune.store import Store

#: The campaign of records made by measuring one configuration on purpose.
RUN_CAMPAIGN = "run"


def checked_request(config: Config, cores: int, settings: Mapping[str, Any],
                    args: Mapping[str, Any], where: str = "--set",
                    args_where: str = "--arg") -> RunRequest:
    """The request for ``cores`` ranks of ``config``'s kernel with ``settings`` and the
    kernel arguments ``args`` over the config's: settings in canonical form, checked
    against the kernel (what it can apply) and the system's limits. ConfigError naming
    ``where`` (or ``args_where`` for an argument) and the rule otherwise."""
    spec = get_kernel(config.kernel.name)
    params = spec.normalise_params({**config.kernel.args, **args}, args_where)
    spec.check_size(params, args_where)
    canonical = normalise_settings(dict(settings), where)
    spec.check_settings(canonical, where)
    check_configuration(canonical, cores, config.system.limits, where)
    return RunRequest(spec.name, cores, canonical, params)


def run_once(backend: Backend, request: RunRequest, reps: int, store: Store | None,
             say: Callable[[str], None] = lambda _: None) -> list[dict[str, Any]]:
    """Measure ``request`` ``reps`` times on ``backend``; each record is appended to
    ``store`` (campaign ``run``) as soon as it is made, so a stop keeps what was measured.

    Returns the records (as stored). Stops between repetitions when iotune is told to stop
    (:mod:`iotune.execution.interrupt`); the caller installs the signal handling."""
    records = []
    for rep in range(reps):
        interrupt.check()
        say(f"iotune: run {rep + 1}/{reps}: {request.kernel} at {request.cores} ranks "
            f"({backend.name})")
        record = backend.measure(request, rep)
        if store is not None:
            record = store.append({"campaign": RUN_CAMPAIGN, **record})
        records.append(record)
    return records
