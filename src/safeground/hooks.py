"""Hooks: the one way a lower app calls back into the apps above it (docs/adr/0017).

The lower app declares each kind of hook once, as a module-level `Kind`: its name, the hooks'
signature (the type it is annotated with), when its hooks run, and how their answers combine.
The apps above register in their `AppConfig.ready()` with `kind.register(hook)`; the lower app
calls the kind like a function. Three timings:

- IN_TRANSACTION: run at the call, inside the caller's transaction (a hook's writes commit or
  roll back with the caller's); calling one outside a transaction is refused.
- AFTER_COMMIT: each hook is queued with `transaction.on_commit(robust=True)` at the call: it runs
  once the caller's transaction commits, never after a rollback, and its failure is logged, not
  turned into a failed write. The call answers nothing.
- AT_RENDER: run at the call to collect what a page, fragment or socket's answer shows; a read.

Hooks run in the order they were registered (the apps' `ready()` in INSTALLED_APPS order, then
the order within each `ready()`), and `listing()` shows that order. A hook is registered under a
stable id (its module and name), so a second `ready()` adds nothing. Registering with a kind
that was never declared raises `UnknownKind`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from typing import Any

from asgiref.local import Local
from django.db import transaction


class Timing(StrEnum):
    IN_TRANSACTION = "in the transaction"
    AFTER_COMMIT = "after commit"
    AT_RENDER = "at render"


class UnknownKind(LookupError):
    """A hook registered with a kind that was never declared."""


def ignored(answers: list[Any]) -> None:
    """The hooks' answers are not read (every AFTER_COMMIT kind)."""


def total(answers: list[int]) -> int:
    return sum(answers)


def found[T](answers: list[T | None]) -> list[T]:
    """The answers in the hooks' order, leaving out the hooks that had nothing (None)."""
    return [answer for answer in answers if answer is not None]


def hook_id(hook: Callable[..., Any]) -> str:
    return f"{hook.__module__}.{hook.__qualname__}"


_kinds: dict[str, Kind[..., Any, Any]] = {}


class Kind[**P, A, R]:
    """A kind of hook. P and A are the hooks' parameters and answer, R what the call answers."""

    def __init__(
        self, name: str, timing: Timing, combine: Callable[[list[A]], R], *, declare: bool = True
    ) -> None:
        """declare=False makes a kind outside the listing, that nothing can register with."""
        if timing is Timing.AFTER_COMMIT and combine is not ignored:
            raise ValueError(f"{name}: an after-commit hook's answer is never read")
        self.name, self.timing, self.combine = name, timing, combine
        self._hooks: dict[str, Callable[P, A]] = {}  # in registration order
        if declare:
            if name in _kinds:
                raise ValueError(f"The hook kind {name} is declared twice")
            _kinds[name] = self

    def __repr__(self) -> str:
        return f"<hook kind {self.name}, {self.timing}>"

    def register(self, hook: Callable[P, A], *, id: str | None = None) -> Callable[P, A]:
        """Called from an AppConfig.ready(); registering the same id again keeps its place."""
        if _kinds.get(self.name) is not self:
            raise UnknownKind(f"No hook kind {self.name} is declared")
        self._hooks[id or hook_id(hook)] = hook
        return hook

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.timing is Timing.AFTER_COMMIT:
            for hook in self._hooks.values():
                transaction.on_commit(partial(hook, *args, **kwargs), robust=True)
            return self.combine([])
        if self.timing is Timing.IN_TRANSACTION and transaction.get_autocommit():
            raise RuntimeError(f"{self.name} runs inside the caller's transaction: none is open")
        return self.combine([hook(*args, **kwargs) for hook in self._hooks.values()])

    def hook_ids(self) -> list[str]:
        return list(self._hooks)

    @contextmanager
    def replaced(self, *hooks: Callable[P, A]) -> Iterator[None]:
        """Tests: these hooks instead of the registered ones, for the `with` block."""
        kept = self._hooks
        self._hooks = {hook_id(hook): hook for hook in hooks}
        try:
            yield
        finally:
            self._hooks = kept


@dataclass(frozen=True)
class Registered:
    kind: str
    timing: Timing
    order: int  # 1 runs first
    hook: str

    def __str__(self) -> str:
        return f"{self.kind} ({self.timing}) {self.order}: {self.hook}"


def listing() -> list[Registered]:
    """Every declared kind's hooks, by kind name, each kind's in the order they run."""
    return [
        Registered(name, kind.timing, order, hook)
        for name, kind in sorted(_kinds.items())
        for order, hook in enumerate(kind.hook_ids(), start=1)
    ]


def declared() -> list[str]:
    return sorted(_kinds)


# after_commit_once: per connection, as Django keeps its connections (a thread, or an async
# context), the pending run of each callback id.
_pending = Local()


@dataclass(eq=False)
class _Run:
    callback: Callable[[], object]
    done: bool = False


def after_commit_once(callback: Callable[[], object]) -> None:
    """Run `callback` once after the caller's transaction commits, however often it is asked for
    in that transaction (a bulk change), and not at all if it rolls back; robust, as every
    after-commit hook is.

    Each request queues its own on_commit, so Django drops exactly the requests of a rolled-back
    transaction or savepoint; the requests share one run, which the first of them to be called
    does. A run left behind by a rollback is taken up by the next transaction that asks."""
    pending: dict[str, _Run] | None = getattr(_pending, "runs", None)
    if pending is None:
        pending = _pending.runs = {}
    key = hook_id(callback)
    run = pending.setdefault(key, _Run(callback))
    transaction.on_commit(partial(_run_once, pending, key, run), robust=True)


def _run_once(pending: dict[str, _Run], key: str, run: _Run) -> None:
    if run.done:
        return
    run.done = True
    if pending.get(key) is run:
        del pending[key]
    run.callback()
