"""Training campaigns: the plan of runs over the configured scales, and running it.

* :mod:`~iotune.train.designs`: which configurations a scale runs (full, systematic, Latin
  hypercube, recorded);
* :mod:`~iotune.train.plan`: the tasks of a campaign, scale by scale;
* :mod:`~iotune.train.run`: running the tasks not yet in the store (resumable);
* :mod:`~iotune.train.jobscript`: the Slurm job script and the core-hour estimate of a plan.
"""

from iotune.train.plan import ScalePlan, Task, check_fits_allocation, plan_campaign
from iotune.train.run import CampaignInterrupted, done_tasks, run_campaign

__all__ = ["CampaignInterrupted", "ScalePlan", "Task", "check_fits_allocation",
           "done_tasks", "plan_campaign", "run_campaign"]
