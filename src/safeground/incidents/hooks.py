"""What apps above the log hear of, after it commits: a broadcast sent, a task given to someone,
a flashpoint warning written (alerts pushes each to stewards' phones), an incident resolved or
closed (supporters texts the reporters whose report it was).

The log never imports those apps: each registers a listener in its AppConfig.ready(). A listener
runs once the write has committed (nothing is heard of a rolled-back write), and its failure is
logged, never turned into a failed write (Django's robust on_commit).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from django.db import transaction

Listener = Callable[[Any], object]  # what it answers is not read

_broadcast: list[Listener] = []
_task: list[Listener] = []
_warning: list[Listener] = []
_dealt_with: list[Listener] = []


def on_broadcast_sent(listener: Listener) -> None:
    """listener(broadcast): an urgent message to stewards was sent."""
    if listener not in _broadcast:
        _broadcast.append(listener)


def on_task_given(listener: Listener) -> None:
    """listener(assignment): an incident was assigned (the entry names the assignee)."""
    if listener not in _task:
        _task.append(listener)


def on_warning_written(listener: Listener) -> None:
    """listener(warning): a flashpoint warning entry (the zone is on it)."""
    if listener not in _warning:
        _warning.append(listener)


def on_incident_dealt_with(listener: Listener) -> None:
    """listener(status_entry): an incident was resolved or closed (the entry's `concerns` is the
    incident's report). Heard at each resolution and closing: a listener that acts once checks."""
    if listener not in _dealt_with:
        _dealt_with.append(listener)


def _after_commit(listeners: list[Listener], subject: Any) -> None:
    for listener in listeners:
        transaction.on_commit(partial(listener, subject), robust=True)


def broadcast_sent(broadcast: Any) -> None:
    _after_commit(_broadcast, broadcast)


def task_given(assignment: Any) -> None:
    _after_commit(_task, assignment)


def warning_written(warning: Any) -> None:
    _after_commit(_warning, warning)


def incident_dealt_with(status_entry: Any) -> None:
    _after_commit(_dealt_with, status_entry)
