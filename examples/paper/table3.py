"""Table 3 of Behzad et al. (HPDC'14) beside iotune's simulated Hopper.

The simulated numbers come from the analytic model in ``iotune.sim.lustre`` with the
``hopper`` preset: the default configuration (stripe count 2, stripe size 1 MiB, one
aggregator per stripe) and the best configuration of the paper-like search space at each
scale (``iotune.sim.space.paper_space``). Three of the preset's constants were fitted to
this table at 128, 512 and 2048 cores (``python -m iotune.sim.calibrate``), so those rows
are in-sample: fitted, not reproduced. The rows at 1024 and 8192 cores are out-of-sample.
Noise is on by default (the preset's idle/busy variability, ten seeded repetitions);
``--noise 0`` prints the deterministic model. See ``README.md`` here and ``docs/sim.md``.

    python examples/paper/table3.py [--system hopper] [--noise 1] [--repetitions 10]
                                    [--seed 0] [--format table|csv|json]
"""

from __future__ import annotations

import sys

from iotune.tune.paper_table3 import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
