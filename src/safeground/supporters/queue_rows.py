"""The statements a batch of reports is written in (services.reports_write), in plain SQL.

A flood is a hundred reports a second. Through the ORM a batch's six statements cost about 11 ms
of CPU to compile, ten times their round trips, and the server ran out of CPU before the
database did (bench_supporters.py: `server CPU per report`). Here each statement is a few lines
of SQL with its values, in the subset PostgreSQL and SQLite (3.35+) share: INSERT ... ON CONFLICT
... RETURNING. Values are prepared by the models' own fields (a photo is stored by its field, a
time adapted for the database), so a field added to a model is written here too.

Four statements a batch, however many reports: the reporters and what they and their network
addresses sent within each bound's window (one SELECT), the new reporters (one INSERT), the
items joined or begun (one INSERT ... ON CONFLICT DO UPDATE: an item counted up where it is
open, begun where none is), the reports (one INSERT).
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model

from safeground.clock import stored_time

from .abuse import LIMITS
from .models import Reporter, SupporterReport, TriageItem

# In the models' order of fields, as Model.from_db reads the values.
REPORTER_FIELDS = ("id", "channel", "key", "phone", "trust")
ITEM_FIELDS = (
    "id",
    "fixture_id",
    "block_id",
    "category",
    "status",
    "count",
    "trust",
    "first_at",
    "last_at",
    "log_entry_id",
)


def _table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _when(value: datetime) -> Any:
    return connection.ops.adapt_datetimefield_value(value)


def _placeholders(n: int) -> str:
    return ", ".join(["%s"] * n)


def rows_insert(
    objs: Sequence[Model],
    *,
    conflict: str = "",
    conflict_params: Sequence[Any] = (),
    returning: Sequence[str] = ("id",),
) -> list[tuple[Any, ...]]:
    """INSERT the objects (of one model) in one statement, their values prepared by their fields
    as the ORM's would be; the `returning` columns of each row written, in order."""
    model = type(objs[0])
    fields = [f for f in model._meta.local_concrete_fields if not f.primary_key]
    # The thread's connection, once: each attribute of `connection` (a proxy) looks it up again
    # in a thread-local store, and a report's values and columns asked ~90 times (6% of its CPU).
    db = connections[DEFAULT_DB_ALIAS]
    values: list[Any] = []
    for obj in objs:
        values.extend(f.get_db_prep_save(f.pre_save(obj, True), connection=db) for f in fields)
    one = f"({_placeholders(len(fields))})"
    columns = ", ".join(db.ops.quote_name(str(f.column)) for f in fields)
    sql = (
        f"INSERT INTO {_table(model)} ({columns})"
        f" VALUES {', '.join([one] * len(objs))} {conflict}"
        f" RETURNING {', '.join(returning)}"
    )
    with db.cursor() as cursor:
        cursor.execute(sql, [*values, *conflict_params])
        return list(cursor.fetchall())


def reporters_and_sent(
    *, keys: Iterable[str], networks: Iterable[str], urgent_networks: Iterable[str], now: datetime
) -> tuple[dict[str, Reporter], dict[str, Counter[str]]]:
    """The reporters known by these keys, and how many reports each of them and each of these
    network addresses sent within each bound's window (abuse.LIMITS), an address's up to its
    bound: one statement. The addresses' higher bound for a life at risk is counted only for
    `urgent_networks` (those with such a report in the batch): a flood's address is not counted
    up to the higher bound at every batch."""
    keys, networks = sorted(set(keys)), sorted(set(networks) - {""})
    report, reporter = _table(SupporterReport), _table(Reporter)
    sent_since = (
        f"(SELECT COUNT(*) FROM {report} s WHERE s.reporter_id = r.id AND s.received_at >= %s)"
    )
    sql = (
        f"SELECT 'reporter', r.key, r.id, r.channel, r.phone, r.trust, {sent_since}, {sent_since}"
        f" FROM {reporter} r WHERE r.key IN ({_placeholders(len(keys))})"
    )
    params: list[Any] = [
        _when(LIMITS["reporter"].since(now)),
        _when(LIMITS["reporter_urgent"].since(now)),
        *keys,
    ]
    counted = [("network", n) for n in networks]
    counted += [("network_urgent", n) for n in sorted(set(urgent_networks) - {""})]
    for bound, network in counted:
        # Counted up to the bound only: a stand's flood from one address would otherwise count
        # its thousands of reports again at every batch.
        sql += (
            f" UNION ALL SELECT %s, %s, NULL, NULL, NULL, NULL, COUNT(*), NULL FROM"
            f" (SELECT 1 FROM {report} s WHERE s.network = %s AND s.received_at >= %s LIMIT %s) n"
        )
        limit = LIMITS[bound]
        params += [bound, network, network, _when(limit.since(now)), limit.rate.count]
    known: dict[str, Reporter] = {}
    counts: dict[str, Counter[str]] = {bound: Counter() for bound in LIMITS}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for bound, key, pk, channel, phone, trust, sent, sent_urgent in cursor.fetchall():
            if bound == "reporter":
                known[key] = _reporter((pk, channel, key, phone, trust))
                counts["reporter"][key] = sent
                counts["reporter_urgent"][key] = sent_urgent
            else:
                counts[bound][key] = sent
    return known, counts


def _reporter(row: Sequence[Any]) -> Reporter:
    # The fields read; the others (its awaiting text) load if asked for.
    return Reporter.from_db(connection.alias, list(REPORTER_FIELDS), list(row))


def reporters_insert(new: Sequence[Reporter]) -> dict[str, Reporter]:
    """The new reporters, by key. One made a moment ago by another process is read instead
    (DO NOTHING writes no row for it)."""
    rows = rows_insert(new, conflict="ON CONFLICT (key) DO NOTHING", returning=REPORTER_FIELDS)
    made = {row[2]: _reporter(row) for row in rows}
    missed = [r.key for r in new if r.key not in made]
    if missed:
        for reporter in Reporter.objects.filter(key__in=missed).only(*REPORTER_FIELDS):
            made[reporter.key] = reporter
    return made


def items_join(
    begun: Sequence[TriageItem], *, open_since: datetime
) -> dict[tuple[Any, ...], TriageItem]:
    """Each place's open item counted up by its reports (count, last report, most trusted
    reporter), or the item begun where the place has none open: one statement, its rows in the
    order of their places (two processes' batches lock items in one order, never deadlocking).

    `begun` holds one unsaved item per place, with the reports joining it counted. An open item
    whose last report is older than `open_since` is not joined: its place is left out of the
    answer (items_close_quiet)."""
    table = _table(TriageItem)
    # The index's own predicate, as each database wrote it (PostgreSQL infers the index from it).
    is_open = '"is_open" = 1' if connection.vendor == "sqlite" else "is_open"
    conflict = (
        f"ON CONFLICT (fixture_id, block_id, category) WHERE {is_open} DO UPDATE SET"
        f" count = {table}.count + excluded.count,"
        f" last_at = CASE WHEN excluded.last_at > {table}.last_at"
        f" THEN excluded.last_at ELSE {table}.last_at END,"
        f" trust = CASE WHEN excluded.trust > {table}.trust"
        f" THEN excluded.trust ELSE {table}.trust END"
        f" WHERE {table}.last_at >= %s"
    )
    ordered: list[TriageItem] = sorted(
        begun, key=lambda i: (i.fixture_id, i.block_id or 0, i.category)
    )
    rows = rows_insert(
        ordered,
        conflict=conflict,
        conflict_params=[_when(open_since)],
        returning=ITEM_FIELDS,
    )
    items = {}
    for row in rows:
        item = TriageItem.from_db(connection.alias, list(ITEM_FIELDS), list(row))
        item.first_at, item.last_at = stored_time(item.first_at), stored_time(item.last_at)
        items[(item.fixture_id, item.block_id, item.category)] = item
    return items


def items_close_quiet(
    places: Iterable[tuple[int, int | None, str]], *, open_since: datetime
) -> None:
    """Close the open items of these places gone quiet since `open_since` (a new one begins)."""
    for fixture_id, block_id, category in places:
        if block_id is None:  # no open item holds a place without a block (NULLs never clash)
            continue
        TriageItem.objects.filter(
            fixture_id=fixture_id,
            block_id=block_id,
            category=category,
            is_open=True,
            last_at__lt=open_since,
        ).update(is_open=False)
