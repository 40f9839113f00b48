"""The database half of a backup: a consistent copy out, and a restore that is whole or nothing.

SQLite: Python's online backup API inside one read transaction, so the copy and the counts in
the manifest are of the same moment while a server keeps running and writing.
Restored to a temporary file beside the target and moved into place.

PostgreSQL: `pg_dump --format=custom` of a snapshot exported by a repeatable-read transaction
(the counts are read in it), restored with `pg_restore --single-transaction`: all or nothing.
"""

import os
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from django.apps import apps
from django.db import connection, transaction

from .manifest import BackupError

SQLITE_FILE = "database.sqlite3"
PG_FILE = "database.pgdump"
# Rows put there by the migrations themselves: a freshly migrated database is still empty.
SEEDED_TABLES = {"incidents_category"}


def database_name() -> str:
    return str(connection.settings_dict["NAME"])


def _major(version_text: str, tool: str) -> int:
    found = re.search(r"\)\s*(\d+)", version_text) or re.search(r"(\d+)\.\d+", version_text)
    if found is None:
        raise BackupError("database", f"cannot read the version of {tool}: {version_text!r}")
    return int(found.group(1))


def pg_tool(name: str) -> tuple[str, int, str]:
    """(path, major version, version text) of pg_dump or pg_restore, or a clear refusal."""
    path = shutil.which(name)
    if path is None:
        raise BackupError(
            "database",
            f"{name} is not on PATH: install the PostgreSQL client tools of the server's major"
            " version (Debian: postgresql-client)",
        )
    text = subprocess.run(
        [path, "--version"], capture_output=True, text=True, errors="replace", check=False
    ).stdout.strip()
    return path, _major(text, name), text


def _server_major() -> int:
    connection.ensure_connection()
    return int(connection.pg_version) // 10000  # type: ignore[attr-defined]


def _pg_env() -> dict[str, str]:
    """The connection settings as libpq's variables: no password on a command line."""
    config = connection.settings_dict
    env = dict(os.environ)
    for key, var in (("HOST", "PGHOST"), ("PORT", "PGPORT"), ("USER", "PGUSER")):
        if config.get(key):
            env[var] = str(config[key])
    if config.get("PASSWORD"):
        env["PGPASSWORD"] = str(config["PASSWORD"])
    return env


def database_dump(folder: Path, counts: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Copy the configured database into `folder`; answer what the manifest says of it, with
    the counts read at the moment copied."""
    if connection.vendor == "sqlite":
        return _sqlite_dump(folder / SQLITE_FILE, counts)
    if connection.vendor == "postgresql":
        return _pg_dump(folder / PG_FILE, counts)
    raise BackupError("database", f"cannot back up a {connection.vendor} database")


def _sqlite_dump(path: Path, counts: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    if connection.in_atomic_block:
        raise BackupError("database", "a backup cannot run inside another transaction")
    connection.ensure_connection()
    source = connection.connection
    # A read transaction: the counts and the copy see one snapshot while writers carry on (in
    # WAL mode). A write transaction would not do: the backup API waits on its own lock forever.
    source.execute("BEGIN DEFERRED")
    try:
        source.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        found = counts()
        with closing(sqlite3.connect(path)) as target:
            source.backup(target)
    finally:
        source.execute("ROLLBACK")
    return {
        "vendor": "sqlite",
        "file": SQLITE_FILE,
        "sqlite_version": sqlite3.sqlite_version,
        "counts": found,
    }


def _pg_dump(path: Path, counts: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    tool, major, version = pg_tool("pg_dump")
    server = _server_major()
    if major < server:
        raise BackupError(
            "database",
            f"{version} cannot dump a PostgreSQL {server} server: install the client tools of"
            f" version {server} or later (Debian: postgresql-client-{server})",
        )
    if connection.in_atomic_block:
        raise BackupError("database", "a backup cannot run inside another transaction")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        found = counts()
        cursor.execute("SELECT pg_export_snapshot()")
        snapshot = cursor.fetchone()[0]
        # The snapshot lives as long as this transaction: pg_dump sees exactly what was counted.
        done = subprocess.run(
            [tool, "--format=custom", f"--snapshot={snapshot}", f"--file={path}",
             "--dbname", database_name()],
            env=_pg_env(), capture_output=True, text=True, errors="replace", check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise BackupError("database", f"pg_dump failed: {done.stderr.strip()}")
    return {
        "vendor": "postgresql",
        "file": PG_FILE,
        "pg_dump_version": version,
        "server_major": server,
        "counts": found,
    }


def database_holdings() -> dict[str, int]:
    """Tables of Safeground's apps that hold rows (beyond what the migrations seed), with a
    count of each: a database with any is not a restore target."""
    tables = set(connection.introspection.table_names())
    held: dict[str, int] = {}
    for model in apps.get_models():
        table = model._meta.db_table
        if not model.__module__.startswith("safeground.") or table in SEEDED_TABLES:
            continue
        if table in tables and table not in held:
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(table)}")
                rows = cursor.fetchone()[0]
            if rows:
                held[table] = rows
    return held


def database_refuse_if_held() -> None:
    held = database_holdings()
    if held:
        # The tables a person recognises first: the log, matches, people, evidence, scans.
        first = ["incidents_logentry", "matches_fixture", "accounts_user", "casework_evidence"]
        order = sorted(held, key=lambda t: (first.index(t) if t in first else len(first), t))
        some = ", ".join(f"{table} {held[table]}" for table in order[:5])
        more = f" and {len(held) - 5} more tables" if len(held) > 5 else ""
        raise BackupError(
            "database",
            f"the database {database_name()} already holds Safeground data ({some}{more} rows):"
            " a backup is restored only into an empty database. Create a new one (or move this"
            " one aside) and point DATABASE_URL at it",
        )


def database_check_restorable(manifest: dict[str, Any]) -> None:
    """Everything about the database that can be known before anything is changed."""
    wanted = manifest.get("database", {}).get("vendor")
    if wanted != connection.vendor:
        raise BackupError(
            "database",
            f"the backup is of a {wanted} database; the configured database is"
            f" {connection.vendor} ({database_name()}): set DATABASE_URL to match",
        )
    if connection.vendor == "postgresql":
        _, major, version = pg_tool("pg_restore")
        made = _major(str(manifest["database"].get("pg_dump_version", "")), "pg_dump")
        if major < made:
            raise BackupError(
                "database",
                f"the backup was made by pg_dump {made}; {version} cannot read it: install the"
                f" client tools of version {made} or later",
            )
    database_refuse_if_held()


def database_restore(folder: Path, manifest: dict[str, Any]) -> None:
    """Put the backup's database in place of the configured (empty) one, whole or not at all."""
    file = folder / str(manifest["database"]["file"])
    if connection.vendor == "sqlite":
        _sqlite_restore(file)
    else:
        _pg_restore(file)


def _sqlite_restore(file: Path) -> None:
    target = Path(database_name())
    staged = target.with_name(f".{target.name}.restoring-{os.getpid()}")
    try:
        shutil.copyfile(file, staged)
        try:
            with closing(sqlite3.connect(staged)) as check:
                result = check.execute("PRAGMA integrity_check").fetchone()[0]
        except sqlite3.DatabaseError as error:
            result = str(error)
        if result != "ok":
            raise BackupError("database", f"{file}: the database copy is damaged ({result})")
        connection.close()
        if target.exists():
            # Fold the old file's write-ahead log in, so no stale -wal is read against the new one.
            with closing(sqlite3.connect(target)) as old:
                old.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        os.replace(staged, target)
        for stale in (
            target.with_name(target.name + "-wal"),
            target.with_name(target.name + "-shm"),
        ):
            stale.unlink(missing_ok=True)
    finally:
        staged.unlink(missing_ok=True)


def _pg_restore(file: Path) -> None:
    tool, _, _ = pg_tool("pg_restore")
    # A migrated but empty database has the tables already: drop them in the same transaction.
    clean = ["--clean", "--if-exists"] if connection.introspection.table_names() else []
    connection.close()
    done = subprocess.run(
        [tool, "--single-transaction", "--exit-on-error", "--no-owner", "--no-privileges",
         *clean, "--dbname", database_name(), str(file)],
        env=_pg_env(), capture_output=True, text=True, errors="replace", check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise BackupError(
            "database",
            f"pg_restore failed and the database {database_name()} was left as it was:"
            f" {done.stderr.strip()}",
        )
