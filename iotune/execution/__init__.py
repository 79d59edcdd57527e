"""Running programs and what surrounds a run: launchers (:mod:`~iotune.execution.launchers`),
the runner (:mod:`~iotune.execution.runner`), run and scratch directories, file systems,
Slurm, signals (:mod:`~iotune.execution.interrupt`), and a user's own MPI program
(:mod:`~iotune.execution.application`).

Importing the package itself runs nothing: the kernel programs import its modules at
start-up, and import only what they use.
"""
