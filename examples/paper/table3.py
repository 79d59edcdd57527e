"""Table 3 of Behzad et al. (HPDC'14) beside iotune's simulated Hopper.

The simulated numbers come from the analytic model in ``iotune.sim.lustre`` with the
``hopper`` preset: the default configuration (stripe count 2, stripe size 1 MiB, one
aggregator per stripe) and the best configuration of the paper-like search space at each
scale (``iotune.sim.space.paper_space``), noise off. See ``docs/sim.md``.

    python examples/paper/table3.py [--system hopper] [--format table|csv|json]
"""

from __future__ import annotations

import sys

from iotune.sim.table3 import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
