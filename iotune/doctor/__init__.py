"""``iotune doctor``: whether a tune can run here, each check on one line with its fix.

The checks (:mod:`iotune.doctor.checks`, one module each) register themselves
(:func:`~iotune.doctor.registry.register_check`) in the order they run; each names the
checks it needs, and is skipped when one of those found a problem, so one cause is
reported once. Whatever needs MPI, mpi4py or h5py runs in a subprocess, with the
interpreter that runs the kernels (:mod:`iotune.doctor.probe`): the driver never imports
them. The command runs :func:`iotune.doctor.run.run_checks` over a
:class:`iotune.doctor.context.DoctorContext`.
"""
