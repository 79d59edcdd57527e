"""The measurement store: an append-only JSON-lines journal and what reads it.

Its parts import downwards only:

- :mod:`.damage`: damaged and duplicate lines, and who hears that a reader skipped some;
- :mod:`.location`: the one journal file a store path leads to (symbolic links followed),
  refused when it is a named pipe or device or when its directory is missing;
- :mod:`.lock`: the store's lock, a lock file made with ``O_EXCL`` (no ``fcntl`` needed);
- :mod:`.journal`: the journal file (:class:`Store`: append, read, locking) and record ids;
- :mod:`.claims`: which worker measures which run of a campaign (many ``train`` at once);
- :mod:`.source`: what a measurement was measured with besides its configuration;
- :mod:`.targets`: what a search can minimise (the write's time, the read's, both);
- :mod:`.records`: one record as a :class:`~.records.Measurement`, and flat rows of them;
- :mod:`.columns`, :mod:`.segments`, :mod:`.cache`: the columnar cache beside the journal;
- :mod:`.views`: frames, measurements and light records read from the cache;
- :mod:`.index`: a whole store read through the cache (:class:`~.index.StoreIndex`,
  :func:`~.index.read_dataframe`, :func:`~.index.write_csv`);
- :mod:`.check`: every line of a store checked, and the bad ones moved aside (repair).

The journal's names are here too, so ``from iotune.store import Store`` loads nothing else.
"""

from iotune.store.journal import SCHEMA_VERSION, Store, now_iso

__all__ = ["SCHEMA_VERSION", "Store", "now_iso"]
