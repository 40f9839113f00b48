"""A kept file and its record, both or neither: the evidence locker's files and the log's photos
(docs/adr/0024-full-disk-and-long-runs.md).

The file is written first, then its record in a transaction of its own; if the record fails (the
database full or refusing writes, at its INSERT or at its COMMIT) the file is removed again, and a
file a full disk cut short is removed too. So no record ever points to a missing or partial file,
and no file is left without its record. The record's transaction must be the outermost (called
outside any other), or its commit would come later than the removal could.
"""

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from django.core.files.storage import Storage
from django.db import transaction

from safeground.errors import refusal_for

logger = logging.getLogger(__name__)


def file_then_record[R](
    *, storage: Storage, name: str, content: Any, record: Callable[[str], R]
) -> R:
    """Store `content` in `storage` under `name` (or the free name next to it), then call
    `record(stored_name)` in a transaction; StorageFull (503) when the disk is full or the
    database refuses writes. Nothing stays behind from a failure."""
    chosen = storage.get_available_name(name)
    try:
        stored = storage.save(chosen, content)
    except BaseException as error:
        # What a full disk cut short is ours (the name was free a moment ago); a whole file
        # there is another upload's, which chose the name in between, and is left alone.
        if _partial(storage, chosen, content):
            _remove(storage, chosen)
        full = refusal_for(error)
        if full is not None:
            raise full from error
        raise
    try:
        with transaction.atomic(durable=True):
            return record(stored)
    except BaseException as error:
        _remove(storage, stored)
        full = refusal_for(error)
        if full is not None:
            raise full from error
        raise


def _partial(storage: Storage, name: str, content: Any) -> bool:
    """The file at `name` is shorter than what was being written: the write stopped part way."""
    with contextlib.suppress(OSError, NotImplementedError):
        return storage.exists(name) and bool(storage.size(name) < content.size)
    return False


def _remove(storage: Storage, name: str) -> None:
    try:
        storage.delete(name)
    except OSError:  # the disk that failed the write may fail this too: said, not raised over it
        logger.exception("could not remove %s after its record failed", name)
