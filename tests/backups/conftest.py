"""The backup tests' system: their own file folders, recorded matches, and an empty system (its
own database and folders) that the real `safeground` command restores into in a process of its
own."""

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from safeground.incidents.photos import log_entry_photo_add
from tests import factories


@pytest.fixture(autouse=True)
def own_folders(settings, tmp_path) -> None:
    """Files of this test only: the test run's folders also hold earlier tests' checkpoint
    files, whose logs a transactional test's flush has removed (a restore rightly flags them)."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.SAFEGROUND_CHECKPOINT_STORAGE = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "checkpoints")},
    }


@pytest.fixture
def recorded(match_day) -> dict:
    """A match with four log entries (one with a steward's photo), a case with a PNG still, a
    full-time checkpoint, and a report at the league match."""
    cup = match_day.cup_tie
    entries = [factories.report(cup) for _ in range(3)]
    log_entry_photo_add(
        entry=entries[0], author=match_day.cast["steward"], upload=factories.upload("phone.png")
    )
    case = factories.case(cup, entries=entries[:2])
    evidence = factories.evidence(case, upload=factories.upload("still.png", factories.PNG))
    factories.report(match_day.league_match)
    call_command("checkpoint", match=cup.pk, full_time=True)
    return {"cup": cup, "evidence": evidence}


@pytest.fixture
def backed_up(recorded, tmp_path) -> dict:
    """The recorded matches, backed up (plain) into tmp_path/backup."""
    folder = tmp_path / "backup"
    call_command("backup", str(folder))
    return {**recorded, "folder": folder}


@pytest.fixture
def empty_system(tmp_path) -> Iterator[dict]:
    """An empty Safeground: a database that does not exist yet (SQLite) or was just created
    (PostgreSQL, `<test database>_restore`, dropped after), and empty file folders."""
    target = tmp_path / "restored"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "safeground.settings.dev",
        "SECRET_KEY": settings.SECRET_KEY,  # the signing key the checkpoints were signed with
        "MEDIA_ROOT": str(target / "media"),
        "SAFEGROUND_CHECKPOINT_DIR": str(target / "checkpoints"),
    }
    env.pop("REDIS_URL", None)
    system = {"env": env, "media": target / "media", "checkpoints": target / "checkpoints"}
    if connection.vendor == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{target / 'safeground.sqlite3'}"
        system["sqlite"] = target / "safeground.sqlite3"
        target.mkdir()
        yield system
        return
    config = connection.settings_dict
    name = f"{config['NAME']}_restore"
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    user = config.get("USER") or "postgres"
    auth = f"{user}:{config['PASSWORD']}" if config.get("PASSWORD") else user
    env["DATABASE_URL"] = f"postgres://{auth}@{config['HOST']}:{config['PORT'] or 5432}/{name}"
    system["pg"] = env["DATABASE_URL"]
    yield system
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def schema_into(system: dict) -> None:
    """Make the empty system a migrated one: the test database's tables, indexes and triggers,
    and no rows."""
    if "sqlite" in system:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"
                " ORDER BY rowid"
            )
            statements = [row[0] for row in cursor.fetchall()]
        with closing(sqlite3.connect(system["sqlite"])) as db:
            for statement in statements:
                db.execute(statement)
            db.commit()
        return
    config = connection.settings_dict
    schema = subprocess.run(
        ["pg_dump", "--schema-only", "--no-owner", "-h", config["HOST"], "-U",
         config.get("USER") or "postgres", config["NAME"]],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    subprocess.run(
        ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-d", system["pg"]],
        input=schema, capture_output=True, check=True,
    )  # fmt: skip


def safeground(system: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "safeground.cli", *args],
        env=system["env"], capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def restored_rows(system: dict, sql: str) -> list[tuple]:
    if "sqlite" in system:
        with closing(sqlite3.connect(system["sqlite"])) as db:
            return db.execute(sql).fetchall()
    with psycopg.connect(system["pg"]) as db:
        return db.execute(sql).fetchall()
