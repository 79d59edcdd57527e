"""What a kernel's I/O looks like, as numbers: the layer below the kernel specs.

Three descriptions of one workload, each a plain data model with the rules that keep it
consistent, and none reading a file, running anything or knowing a kernel by name:

* :mod:`~iotune.workload.pattern` the write pattern the simulator models (ranks, bytes,
  calls, api, collective);
* :mod:`~iotune.workload.counters` one file's merged Darshan counters
  (:class:`~iotune.workload.counters.FileCounters`), and Darshan's request-size bins;
* :mod:`~iotune.workload.modelled` the rules by which a kernel's requests become those
  counters, in closed form;
* :mod:`~iotune.workload.genes` the genes a proxy search varies, the hints a log gives
  them and the variants a match compares.

The kernel specs (:mod:`iotune.kernel_specs`) build each kernel's pattern, counters, genes
and variants from these; the simulator (:mod:`iotune.sim`) runs patterns, and the Darshan
applications (:mod:`iotune.darshan`) read logs into the same counters and compare them with
the kernels'. This package imports only :mod:`iotune.kernel_args` and
:mod:`iotune.errors`, so everything above may use it.
"""
