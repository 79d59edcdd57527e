"""The store: writable, and every line of it a record (:mod:`iotune.store.check`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from iotune.doctor.context import DoctorContext
from iotune.doctor.registry import OK, PROBLEM, Finding, register_check
from iotune.store.check import check_store
from iotune.store.journal import Store, resolve_store_path

NAME = "store"


def _existing_ancestor(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def writable(journal: Path) -> str | None:
    """Why ``journal`` cannot be appended to (or created), or None when it can. Tried, not
    asked of ``os.access`` (root, ACLs and NFS make that unreliable); nothing is changed:
    the journal is opened for appending and closed, or a file is created and removed in
    the nearest directory that exists."""
    try:
        if journal.is_file():
            with journal.open("ab"):
                pass
            return None
        directory = _existing_ancestor(journal.parent)
        if not directory.is_dir():
            return f"{directory} is not a directory"
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".iotune-probe-"):
            pass
    except OSError as exc:
        return f"{exc.strerror or exc} ({exc.filename or journal})"
    return None


@register_check(NAME)
def check(context: DoctorContext) -> Finding:
    """The config's store: appendable (or creatable), and clean by
    :func:`~iotune.store.check.check_store`."""
    journal = resolve_store_path(context.store)
    why = writable(journal)
    if why is not None:
        return Finding(PROBLEM, f"{journal} cannot be written: {why}",
                       "make it writable, or name another store (store: in iotune.yaml, or "
                       "--store)")
    if not journal.is_file():
        return Finding(OK, f"{journal} does not exist yet; its directory is writable")
    checks = check_store(Store(context.store))
    damaged = [c for c in checks if c.bad]
    if damaged:
        return Finding(PROBLEM, "; ".join(c.summary() for c in damaged),
                       f"iotune store check --store {context.store} --repair moves the bad "
                       "lines to a side file")
    records = sum(c.records for c in checks if c.label == "store")
    return Finding(OK, f"{journal}: {records} records, clean, writable")
