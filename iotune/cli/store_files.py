"""The files of a store path, which no command's output may replace. Apart from
:mod:`iotune.cli.common`, whose config and backend imports ``iotune job`` has no use for."""

from __future__ import annotations

from pathlib import Path

from iotune.store.cache import cache_path
from iotune.store.claims import claims_path
from iotune.store.location import is_directory_store, resolve_store_path
from iotune.store.lock import lock_path


def store_files(store: Path | None) -> list[tuple[str, Path]]:
    """The files of a store path, each with what it is: the journal (and the store
    directory, for a store that is one), its lock file, claims file and cache directory."""
    if store is None:
        return []
    journal = resolve_store_path(store)
    files = [("the store in use", journal), ("the store's lock file", lock_path(journal)),
             ("the store's claims file", claims_path(journal)),
             ("the store's cache directory", cache_path(journal))]
    return [("the store in use", store), *files] if is_directory_store(store) else files
