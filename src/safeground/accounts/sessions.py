"""Who is signed in behind many session keys at once: a reconnect storm's sockets (live/admission).

`signed_in_users` answers for each key what `django.contrib.auth.get_user` and django-otp's
middleware answer for one request: the session unexpired, its backend still configured, the user
active and their password unchanged since they logged in (the session's auth hash, or one made
with a SECRET_KEY_FALLBACKS key), and, where their roles need it and SAFEGROUND_REQUIRE_2FA is
on, a confirmed second-factor device of their own verified in that session. It reads the
sessions, the users, their memberships and their devices in one query each, where get_user reads
two per key. tests/accounts/test_sessions.py holds it to get_user's answers.

Unlike get_user it writes nothing: a session that fails is left for the next page load to flush,
and one verified by a fallback key to cycle.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from importlib import import_module
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import (
    BACKEND_SESSION_KEY,
    HASH_SESSION_KEY,
    SESSION_KEY,
    get_user_model,
    load_backend,
)
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from .permissions import memberships_load, needs_second_factor


def signed_in_users(session_keys: Collection[str]) -> dict[str, Any]:
    """session key -> its user, for the keys whose user is fully signed in (the rest left out)."""
    sessions = _session_data(session_keys)
    claimed: dict[str, tuple[str, Any]] = {}  # key -> (backend path, user id)
    for key, data in sessions.items():
        backend_path = data.get(BACKEND_SESSION_KEY)
        if backend_path not in settings.AUTHENTICATION_BACKENDS or SESSION_KEY not in data:
            continue
        try:
            claimed[key] = (backend_path, get_user_model()._meta.pk.to_python(data[SESSION_KEY]))
        except ValidationError:
            continue
    users = _users(set(claimed.values()))
    found: dict[str, Any] = {}
    for key, (backend_path, user_id) in claimed.items():
        user = users.get((backend_path, user_id))
        if user is not None and _hash_verified(user, sessions[key].get(HASH_SESSION_KEY)):
            found[key] = user
    memberships_load({id(user): user for user in found.values()}.values())
    if settings.SAFEGROUND_REQUIRE_2FA:
        verified = _second_factors({k: (u, sessions[k]) for k, u in found.items()})
        found = {key: user for key, user in found.items() if key in verified}
    return found


def _session_data(session_keys: Collection[str]) -> dict[str, dict[str, Any]]:
    store = import_module(settings.SESSION_ENGINE).SessionStore
    keys = [key for key in session_keys if key]
    if not issubclass(store, DatabaseSessionStore):  # cache or cookie sessions: one by one
        loaded = {key: store(key).load() for key in keys}
        return {key: data for key, data in loaded.items() if data}
    rows = store.get_model_class().objects.filter(
        session_key__in=keys, expire_date__gt=timezone.now()
    )
    decoder = store()
    decoded = {
        key: decoder.decode(data) for key, data in rows.values_list("session_key", "session_data")
    }
    return {key: data for key, data in decoded.items() if data}  # undecodable: {}


def _users(claims: set[tuple[str, Any]]) -> dict[tuple[str, Any], Any]:
    """(backend path, user id) -> the user that backend's get_user gives (active, for the model
    backends), read in one query for every model backend's users."""
    by_backend: dict[str, set[Any]] = defaultdict(set)
    for backend_path, user_id in claims:
        by_backend[backend_path].add(user_id)
    found: dict[tuple[str, Any], Any] = {}
    backends = {path: load_backend(path) for path in by_backend}
    model_ids = {
        user_id
        for path, ids in by_backend.items()
        if isinstance(backends[path], ModelBackend)
        for user_id in ids
    }
    rows = {u.pk: u for u in get_user_model()._default_manager.filter(pk__in=model_ids)}
    for backend_path, ids in by_backend.items():
        backend = backends[backend_path]
        for user_id in ids:
            if isinstance(backend, ModelBackend):
                user = rows.get(user_id)
                if user is not None and not backend.user_can_authenticate(user):
                    user = None
            elif hasattr(backend, "get_user"):
                user = backend.get_user(user_id)
            else:
                user = None
            if user is not None:
                found[(backend_path, user_id)] = user
    return found


def _hash_verified(user: Any, session_hash: str | None) -> bool:
    if not hasattr(user, "get_session_auth_hash"):
        return True  # as get_user: a user model without the hash is not checked
    if not session_hash:
        return False
    if constant_time_compare(session_hash, user.get_session_auth_hash()):
        return True
    return any(
        constant_time_compare(session_hash, fallback)
        for fallback in user.get_session_auth_fallback_hash()
    )


def _second_factors(signed_in: dict[str, tuple[Any, dict[str, Any]]]) -> set[str]:
    """The keys whose user needs no second factor, or verified a confirmed device of their own
    in that session (django-otp's persistent id: "app_label.modelname/pk")."""
    from django_otp import DEVICE_ID_SESSION_KEY
    from django_otp.models import Device

    passed: set[str] = set()
    wanted: dict[tuple[str, int], list[tuple[str, Any]]] = defaultdict(list)
    for key, (user, data) in signed_in.items():
        if not needs_second_factor(user):
            passed.add(key)
            continue
        persistent_id = data.get(DEVICE_ID_SESSION_KEY)
        label, _, device_pk = str(persistent_id).rpartition("/")
        if label and device_pk.isdigit():
            wanted[(label, int(device_pk))].append((key, user))
    by_label: dict[str, set[int]] = defaultdict(set)
    for label, pk in wanted:
        by_label[label].add(pk)
    for label, ids in by_label.items():
        try:
            model = apps.get_model(label)
        except (LookupError, ValueError):
            continue
        if not issubclass(model, Device):
            continue
        for device in model.objects.filter(pk__in=ids):
            for key, user in wanted[(label, device.pk)]:
                if device.user_id == user.pk and device.confirmed:
                    passed.add(key)
    return passed
