"""A proxy from ``iotune proxy`` as a config's kernel and pinned settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotune.config import Config, KernelConfig
from iotune.settings.space import SearchSpace

if TYPE_CHECKING:
    from iotune.darshan.proxy import Proxy


def with_proxy(config: Config, proxy: Proxy) -> Config:
    """``config`` with ``proxy``'s kernel and arguments in place of its own, and each
    setting the proxy pins searched at that one value only: in the space's place when the
    space has the setting, else added at its end. The rest of the space is kept."""
    pinned = dict(proxy.settings)
    values = [(n, (pinned.pop(n),) if n in pinned else vals) for n, vals in config.space.values]
    values += [(n, (v,)) for n, v in pinned.items()]
    return config.with_overrides(kernel=KernelConfig(proxy.kernel, tuple(proxy.args.items())),
                                 space=SearchSpace(tuple(values)))
