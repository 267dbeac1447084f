"""Tables and views that other clients saved on the home, seen by a connection that was already open.

Why it exists: a CLI reads the home's catalog when it starts, and two CLIs see each other's tables after a
restart. A gateway's clients share one home for longer: DBeaver reads metadata on one connection while its editor
creates tables on another, a dashboard keeps its connection for days. So before each statement a connection
takes the home's saved definitions again (the current catalog's databases of streamshell's own catalog, each a
folder of JSON files written atomically), keeping its own temporary ones. Nothing is written; a file that cannot
be read is left out, as at start. Reading a few dozen small files costs well under a millisecond each.
"""

from __future__ import annotations

from typing import Any

from shell.catalog.names import DEFAULT_CATALOG
from shell.catalog.store import Catalog


def refresh(catalogs: Any) -> None:
    """Bring the saved tables and views of every database of the built-in catalog up to what is on disk."""
    builtin = catalogs.opened.get(DEFAULT_CATALOG)
    stores = getattr(builtin, "stores", None)
    if not stores:
        return
    for store in stores.values():
        if store.directory is None:
            continue
        fresh = Catalog.open(store.directory)
        for key in [k for k in store.objects if k not in store.temporary and k not in fresh.objects]:
            del store.objects[key]  # dropped by another client
        for key, obj in fresh.objects.items():
            if key not in store.temporary:  # a temporary table of this connection hides a saved one of its name
                store.objects[key] = obj
        store.skipped = {**fresh.skipped}
