"""How iotune completes a config the user left open or handed it a part of.

- :mod:`.builtin`: the config used when there is none (:func:`builtin_config`);
- :mod:`.backend`: a backend's own defaults when nothing says what to search
  (:func:`defaults_for_backend`: the paper's search on a simulated system);
- :mod:`.proxy`: a proxy's kernel and pinned settings in place of the config's
  (:func:`with_proxy`).

Every function here returns a new, validated :class:`~iotune.config.Config` and leaves the
one given unchanged. The command line only parses options and calls these.
"""

from iotune.defaults.backend import defaults_for_backend
from iotune.defaults.builtin import builtin_config
from iotune.defaults.proxy import with_proxy

__all__ = ["builtin_config", "defaults_for_backend", "with_proxy"]
