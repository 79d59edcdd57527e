"""Search spaces like those of the paper (Behzad et al., HPDC'14) for VPIC-IO on Hopper.

:func:`paper_space` is the grid of

* stripe counts of the paper's Table 1: 1, 2, 4, 8, 16, 32, 64, 96, 128, 156 (values above
  the system's OST count are dropped);
* stripe sizes of Table 1: 1, 2, 4, 8, 16, 32, 64, 96, 128 MiB;
* aggregator counts (``cb_nodes``) up to one per node: the powers of two below the node
  count, and the node count itself.

With 24 cores per node this gives 360 configurations at 128 cores, 540 at 512, 630 at 1024,
720 at 2048 and 900 at 8192 (the paper's spaces had 640 at 512 and 2048 cores and 1080 at
8192; their aggregator values are not published). Collective buffering and the buffer size
are left at the system default.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from iotune.errors import ConfigError

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd

TABLE1_STRIPE_COUNTS = (1, 2, 4, 8, 16, 32, 64, 96, 128, 156)
TABLE1_STRIPE_SIZES_MIB = (1, 2, 4, 8, 16, 32, 64, 96, 128)


def aggregator_ladder(nodes: int) -> list[int]:
    """Aggregator counts of the space: powers of two below ``nodes``, and ``nodes``."""
    if nodes <= 0:
        raise ConfigError(f"nodes: {nodes!r} is not a positive integer")
    ladder = {1 << i for i in range(nodes.bit_length()) if (1 << i) <= nodes}
    return sorted(ladder | {nodes})


def paper_space(cores: int, *, cores_per_node: int = 24, ost_count: int = 156) -> pd.DataFrame:
    """The configuration grid at ``cores`` ranks: columns stripe_count, stripe_size (bytes),
    cb_nodes; one row per configuration, stripe count varying slowest."""
    import pandas as pd

    for name, value in (("cores", cores), ("cores_per_node", cores_per_node),
                        ("ost_count", ost_count)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{name}: {value!r} is not a positive integer")
    nodes = -(-cores // cores_per_node)
    counts = [c for c in TABLE1_STRIPE_COUNTS if c <= ost_count]
    sizes = [m * 2**20 for m in TABLE1_STRIPE_SIZES_MIB]
    rows = itertools.product(counts, sizes, aggregator_ladder(nodes))
    return pd.DataFrame(list(rows), columns=["stripe_count", "stripe_size", "cb_nodes"])
