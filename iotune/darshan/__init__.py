"""Tuning a real application from its Darshan log.

These are applications of the layers below: they read logs, compare them with the kernel
specs (:mod:`iotune.kernel_specs`), search kernel configurations with the genetic
algorithm of :mod:`iotune.strategies.evolution` and measure phases through a backend's
:class:`~iotune.backends.base.RunRequest`, so this package sits above the kernel specs, the
strategies and the backends (only the report and the commands import it). What the kernel
specs need to describe a kernel's Darshan features (its counters, their modelled rules, its
genes) is not here but in :mod:`iotune.workload`, below the specs.

Modules, from the log to a proxy and an I/O time estimate:

* :mod:`~iotune.darshan.logfile` reads a log (safely, in a child process);
* :mod:`~iotune.darshan.records` merges a file's POSIX, MPI-IO and HDF5 records into a
  :class:`~iotune.workload.counters.FileCounters`;
* :mod:`~iotune.darshan.signature` turns them into a named feature vector;
* :mod:`~iotune.darshan.similarity` normalises vectors and takes their cosine similarity;
* :mod:`~iotune.darshan.classes` groups files into equivalence classes;
* :mod:`~iotune.darshan.datasets` keeps a record, signature and class per HDF5 dataset;
* :mod:`~iotune.darshan.summary` is the I/O summary of ``iotune profile``;
* :mod:`~iotune.darshan.target` chooses the application's class and masked features;
* :mod:`~iotune.darshan.analytic` derives a kernel configuration's counters through its
  spec;
* :mod:`~iotune.darshan.match` ranks the kernels against an application;
* :mod:`~iotune.darshan.search` finds the most similar kernel configuration;
* :mod:`~iotune.darshan.proxy` finds, writes and reads proxy files;
* :mod:`~iotune.darshan.measured` runs a proxy under strace and signs what it did;
* :mod:`~iotune.darshan.trace` and :mod:`~iotune.darshan.phases` find I/O phases in DXT,
  :mod:`~iotune.darshan.access` their access mode (collective, blocking);
* :mod:`~iotune.darshan.characterize` measures the file system for those phases;
* :mod:`~iotune.darshan.estimate` estimates the application's I/O time.

The driver never imports pydarshan itself: :func:`~iotune.darshan.logfile.read_log` does
that in a child process.
"""

from iotune.darshan.proxy import is_proxy_path, kernel_of, load_proxy, read_proxy

__all__ = ["is_proxy_path", "kernel_of", "load_proxy", "read_proxy"]
