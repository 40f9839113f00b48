"""Settings shared by every deployment, configured from the environment (see README)."""

from pathlib import Path
from typing import Any

import environ

from safeground.limits import limits_read

PACKAGE_DIR = Path(__file__).resolve().parents[1]
BASE_DIR = Path(__file__).resolve().parents[3]  # the checkout: var/ holds the local data
env = environ.Env()

SECRET_KEY = env.str("SECRET_KEY", default="")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Privileged roles must log in with a second factor unless this is switched off (the demo does).
SAFEGROUND_REQUIRE_2FA = env.bool("SAFEGROUND_REQUIRE_2FA", default=True)
SAFEGROUND_DEMO = env.bool("SAFEGROUND_DEMO", default=False)
# Check every live event's data against its schema in live/catalogue.py (on in the tests).
SAFEGROUND_CHECK_LIVE_EVENTS = env.bool("SAFEGROUND_CHECK_LIVE_EVENTS", default=False)
REDIS_URL = env.str("REDIS_URL", default="")
# Background tasks (django.tasks). "immediate": a task runs in the process that enqueues it (one
# server, the default install). "database": tasks wait in the database for `safeground worker`
# processes (django-tasks-db), so several servers share one queue (docs/deploy.md).
SAFEGROUND_TASKS = env.str("SAFEGROUND_TASKS", default="immediate")
TASK_BACKENDS = {
    "immediate": "django.tasks.backends.immediate.ImmediateBackend",
    "database": "django_tasks_db.DatabaseBackend",
}
if SAFEGROUND_TASKS not in TASK_BACKENDS:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(
        f"SAFEGROUND_TASKS={SAFEGROUND_TASKS!r}: use one of {', '.join(TASK_BACKENDS)}"
    )
TASKS = {"default": {"BACKEND": TASK_BACKENDS[SAFEGROUND_TASKS]}}
# The jobs a worker keeps scheduled once a day, at a local time (HH:MM, TIME_ZONE): each task is
# enqueued for its next time when a worker starts and again each time it finishes.
SAFEGROUND_DAILY_TASKS = {"safeground.privacy.tasks.register_daily_task": "03:15"}
# The jobs run every so many seconds (task path -> seconds), in a thread of their own: in each
# server process when tasks run where they are enqueued (the default install, `make run`), in
# `safeground worker` when they wait in the database. Each is idempotent, so two processes running
# one at once do no harm. Cron can run the anchoring job instead: `safeground checkpoint --due`.
SAFEGROUND_PERIODIC_TASKS = {
    "safeground.incidents.tasks.log_heads_anchor_task": 60,
    "safeground.alerts.tasks.alerts_overdue_task": 15,
}
# A club in the league publishes a change of its bans within seconds (after a failure, once a
# minute), and every 15 minutes anyway (bans ending by date): exchange/publishing.py.
SAFEGROUND_PERIODIC_TASKS["safeground.exchange.tasks.league_publish_task"] = 10
SAFEGROUND_PERIODIC_TASKS_IN_SERVER = env.bool(
    "SAFEGROUND_PERIODIC_TASKS_IN_SERVER", default=SAFEGROUND_TASKS == "immediate"
)
# How far in the future a reporter's clock may be before its "time observed" is refused.
SAFEGROUND_CLOCK_SKEW_SECONDS = env.int("SAFEGROUND_CLOCK_SKEW_SECONDS", default=120)
# A phone whose clock is off by this much or more, or that sent a report this long after it was
# made (an offline outbox), is marked so in the control room's log (ADR 0026).
SAFEGROUND_DEVICE_CLOCK_MARK_SECONDS = env.int("SAFEGROUND_DEVICE_CLOCK_MARK_SECONDS", default=120)
# The banned-supporter register (docs/adr/0004-ban-register.md): days a person's data is kept
# after their last ban ends; the score (0-100) from which a ticket holder is flagged.
SAFEGROUND_BAN_RETENTION_DAYS = env.int("SAFEGROUND_BAN_RETENTION_DAYS", default=730)
SAFEGROUND_MATCH_THRESHOLD = env.float("SAFEGROUND_MATCH_THRESHOLD", default=85.0)
# Who was there: a look-up covering more people than this is said to be large before any name is
# shown, and recorded as a large look-up (docs/adr/0007-casework.md).
SAFEGROUND_WHO_LARGE = env.int("SAFEGROUND_WHO_LARGE", default=300)
# Ticket holders' names and dates of birth, and photos (log photos, check photos), are erased
# this many days after the match (docs/adr/0011-personal-data-retention.md): six months, the
# time limit for charging a summary offence (Magistrates' Courts Act 1980 s.127), which the
# Football (Offences) Act 1991 offences are. Anything named in an open case is held longer.
SAFEGROUND_TICKET_RETENTION_DAYS = env.int("SAFEGROUND_TICKET_RETENTION_DAYS", default=183)
SAFEGROUND_PHOTO_RETENTION_DAYS = env.int("SAFEGROUND_PHOTO_RETENTION_DAYS", default=183)
# Evidence files of a closed case are deleted this many days after it closed, and not while a ban
# proposed from it has not ended: six years, the limitation period for a civil claim (Limitation
# Act 1980 s.2). A file on a log entry only goes with the photos (above).
SAFEGROUND_EVIDENCE_RETENTION_DAYS = env.int("SAFEGROUND_EVIDENCE_RETENTION_DAYS", default=2192)
# The demo's cup-tie tickets: "all" (~55,000, about 2 s of a demo load), "sample" (two seats a
# block, the planted ban matches among them: what tests use) or "none".
SAFEGROUND_DEMO_TICKETS = env.str("SAFEGROUND_DEMO_TICKETS", default="all")
# The demo season's log before the cup tie (clashes v Watford, disorder v Middlesbrough), which
# raises the cup tie's risk category, and the cup tie's own night as the police gave it (seven
# arrests, 30 prevented from attending: refused at the turnstiles).
SAFEGROUND_DEMO_HISTORY = env.bool("SAFEGROUND_DEMO_HISTORY", default=True)
# The gates (docs/adr/0005-turnstile-decisions.md). A scan is for the match at the turnstile's
# ground whose kick-off is nearest the time scanned, from OPENS hours before kick-off to CLOSES
# hours after; CACHE_SECONDS is how long a device key, a turnstile and a match's gate ends and
# re-entry rule (Fixture.reentry) are kept in each process (a revoked key stops within it);
# CAPACITY_WARNING is the share of a zone's capacity admitted that raises a warning.
SAFEGROUND_ENTRY_OPENS_HOURS = env.float("SAFEGROUND_ENTRY_OPENS_HOURS", default=6.0)
SAFEGROUND_ENTRY_CLOSES_HOURS = env.float("SAFEGROUND_ENTRY_CLOSES_HOURS", default=3.0)
SAFEGROUND_ENTRY_CACHE_SECONDS = env.float("SAFEGROUND_ENTRY_CACHE_SECONDS", default=5.0)
SAFEGROUND_CAPACITY_WARNING = env.float("SAFEGROUND_CAPACITY_WARNING", default=0.9)
# The Green Guide's turnstile rate (people per turnstile per hour) for entry capacity.
SAFEGROUND_TURNSTILE_RATE = env.int("SAFEGROUND_TURNSTILE_RATE", default=660)
# Live entry counts: at most one `entry.counts` event per match per process in this many seconds.
SAFEGROUND_ENTRY_COUNTS_EVERY = env.float("SAFEGROUND_ENTRY_COUNTS_EVERY", default=1.0)
# The issuing system's HMAC key per ground code, for grounds whose tickets are signed
# (venues/ticket_format.py): a JSON object, e.g. {"london-stadium": "the key"}.
SAFEGROUND_TICKET_KEYS = env.json("SAFEGROUND_TICKET_KEYS", default={})
# Gate pressure (docs/adr/0025-gate-pressure.md): the gates' figures are worked out and published
# every this many seconds while scans arrive (0: never, tests that do not look at them).
SAFEGROUND_GATE_PRESSURE_EVERY = env.float("SAFEGROUND_GATE_PRESSURE_EVERY", default=2.0)
# Offline scanners (docs/adr/0006-offline-scanners.md): a bundle is valid until the match's entry
# closes, and never more than BUNDLE_HOURS after it was issued. BUNDLE_SIGNING_KEY is the base64
# of the 32-byte Ed25519 seed that signs bundles; unset, it is derived from SECRET_KEY (HKDF), so
# changing SECRET_KEY changes it too. Production refuses to start without it.
SAFEGROUND_BUNDLE_HOURS = env.float("SAFEGROUND_BUNDLE_HOURS", default=12.0)
SAFEGROUND_BUNDLE_SIGNING_KEY = env.str("SAFEGROUND_BUNDLE_SIGNING_KEY", default="")
# The log's checkpoints (docs/adr/0008-anchored-log.md): the chain's head is signed with the
# server's key (the bundle key above) on the append that makes EVERY_ENTRIES entries; by the
# anchoring job (SAFEGROUND_PERIODIC_TASKS, every minute) so that no entry stays unsigned longer
# than WITHIN_MINUTES, and once FULL_TIME_MARGIN_MINUTES after the scheduled full time (kick-off
# + 105 minutes) unless someone signed full time already. EVERY_MINUTES (the first append of
# each so many minutes of the clock) is off: the job bounds a quiet log too, which it never did.
# Each is also written as a file through this Django storage (a folder by default; any storage
# backend, e.g. S3 through django-storages, by changing BACKEND and OPTIONS).
SAFEGROUND_CHECKPOINT_EVERY_ENTRIES = env.int("SAFEGROUND_CHECKPOINT_EVERY_ENTRIES", default=50)
SAFEGROUND_CHECKPOINT_EVERY_MINUTES = env.int("SAFEGROUND_CHECKPOINT_EVERY_MINUTES", default=0)
SAFEGROUND_CHECKPOINT_WITHIN_MINUTES = env.int("SAFEGROUND_CHECKPOINT_WITHIN_MINUTES", default=5)
SAFEGROUND_CHECKPOINT_FULL_TIME_MARGIN_MINUTES = env.int(
    "SAFEGROUND_CHECKPOINT_FULL_TIME_MARGIN_MINUTES", default=30
)
SAFEGROUND_CHECKPOINT_STORAGE = {
    "BACKEND": "django.core.files.storage.FileSystemStorage",
    "OPTIONS": {
        "location": env.str(
            "SAFEGROUND_CHECKPOINT_DIR", default=str(BASE_DIR / "var" / "checkpoints")
        )
    },
}
# The log's append (docs/adr/0013-the-cheap-append.md): the categories, the ground's places by
# code, each match's zone map and which zones touch which are kept this many seconds in each
# process (incidents/places.py), so an edit in the admin or a new venue file takes effect within
# it. Flashpoint scoring runs on a thread of its own after each report has committed
# (incidents/flashpoint.py), never on the request's path.
SAFEGROUND_LOG_CACHE_SECONDS = env.float("SAFEGROUND_LOG_CACHE_SECONDS", default=5.0)
# The match on now at each ground (matches.selectors.match_on_now) is kept this many seconds in
# each process: every report of a supporters' flood asks it.
SAFEGROUND_MATCH_ON_NOW_CACHE_SECONDS = env.float(
    "SAFEGROUND_MATCH_ON_NOW_CACHE_SECONDS", default=5.0
)
# The risk policy (YAML): category thresholds, factor weights, rivalries, the match plan per
# category. A safety officer edits it; `safeground assess` checks it and re-assesses open fixtures.
SAFEGROUND_RISK_POLICY = env.str(
    "SAFEGROUND_RISK_POLICY", default=str(PACKAGE_DIR / "matches" / "policy" / "default.yaml")
)
# Backups (docs/backups.md): the age public keys (age1...) every `safeground backup` is
# encrypted to, comma-separated. Set, the server can make backups but not read them back; only
# the holder of a matching private key restores. Unset, backups are plain files.
SAFEGROUND_BACKUP_RECIPIENTS = env.list("SAFEGROUND_BACKUP_RECIPIENTS", default=[])
# A folder of per-ground checklists (<ground code>.yaml); grounds without one use the default
# (deployment/checklists/default.yaml).
SAFEGROUND_CHECKLIST_DIR = env.str("SAFEGROUND_CHECKLIST_DIR", default="")

# What partner agencies are told (partners/, OASIS CAP 1.2): the installation's CAP sender id
# (no spaces or commas), and the file holding the RSA key and self-signed X.509 certificate that
# sign every alert (made once, mode 600, when absent; partners fetch the certificate from
# /api/partners/cap/certificate.pem). Changing the file: partners must fetch the new certificate.
SAFEGROUND_CAP_SENDER = env.str("SAFEGROUND_CAP_SENDER", default="control-room@safeground.invalid")
SAFEGROUND_CAP_SIGNING_FILE = env.str(
    "SAFEGROUND_CAP_SIGNING_FILE", default=str(BASE_DIR / "var" / "cap-signing.pem")
)

# Push alerts to stewards' phones (alerts/, Web Push with VAPID). VAPID_PRIVATE_KEY: the
# base64url of a 32-byte P-256 key (`safeground vapidkey`); unset, derived from SECRET_KEY.
# SUBJECT: how a push service reaches the operator (mailto: or https:). PUSH_HOSTS: the push
# services a phone's subscription may name (the server posts to it: never an inside machine).
# A push lives TTL_SECONDS at its push service, is tried ATTEMPTS times at most, CONCURRENCY
# at once per batch; an urgent broadcast not acknowledged by all within ACK_SECONDS is raised
# to the supervisors and the control room.
SAFEGROUND_VAPID_PRIVATE_KEY = env.str("SAFEGROUND_VAPID_PRIVATE_KEY", default="")
SAFEGROUND_VAPID_SUBJECT = env.str(
    "SAFEGROUND_VAPID_SUBJECT", default="mailto:control-room@safeground.invalid"
)
SAFEGROUND_PUSH_HOSTS = env.list(
    "SAFEGROUND_PUSH_HOSTS",
    default=[
        "fcm.googleapis.com",
        "push.services.mozilla.com",
        "notify.windows.com",
        "push.apple.com",
    ],
)
SAFEGROUND_PUSH_TTL_SECONDS = env.int("SAFEGROUND_PUSH_TTL_SECONDS", default=120)
SAFEGROUND_PUSH_ATTEMPTS = env.int("SAFEGROUND_PUSH_ATTEMPTS", default=3)
SAFEGROUND_PUSH_CONCURRENCY = env.int("SAFEGROUND_PUSH_CONCURRENCY", default=32)
SAFEGROUND_PUSH_TIMEOUT_SECONDS = env.float("SAFEGROUND_PUSH_TIMEOUT_SECONDS", default=5.0)
SAFEGROUND_ALERT_ACK_SECONDS = env.int("SAFEGROUND_ALERT_ACK_SECONDS", default=120)
# A phone's push subscription unused this many days (not given again by the phone, no message
# taken for it) is dropped by the daily retention job; the phone subscribes again at check-in.
SAFEGROUND_PUSH_RETENTION_DAYS = env.int("SAFEGROUND_PUSH_RETENTION_DAYS", default=7)

# A database outage (docs/deploy.md): a turnstile's scan is answered within DEADLINE seconds, a
# 503 with Retry-After when the database did not answer in time; any other request waits up to
# DATABASE_WAIT seconds for a database connection, then gets a 503 too. While the database is
# away each connection pool retries at least every DATABASE_RECONNECT seconds, so the first
# requests after it returns succeed.
SAFEGROUND_SCAN_DEADLINE_SECONDS = env.float("SAFEGROUND_SCAN_DEADLINE_SECONDS", default=2.0)
SAFEGROUND_DATABASE_WAIT_SECONDS = env.float("SAFEGROUND_DATABASE_WAIT_SECONDS", default=5.0)
# Overload: a request that waited longer than this for one of the process's HTTP threads gets a
# 503 with Retry-After instead of being served late (its phone retries with the same key), so a
# backlog drains instead of serving requests whose clients have given up.
SAFEGROUND_QUEUE_WAIT_SECONDS = env.float("SAFEGROUND_QUEUE_WAIT_SECONDS", default=5.0)
SAFEGROUND_DATABASE_RECONNECT_SECONDS = env.float(
    "SAFEGROUND_DATABASE_RECONNECT_SECONDS", default=2.0
)
SAFEGROUND_RETRY_AFTER_SECONDS = env.int("SAFEGROUND_RETRY_AFTER_SECONDS", default=2)
# `safeground serve` (live/serving.py): a client must send a request's headers within
# HEADER_TIMEOUT seconds and may keep an idle connection KEEP_ALIVE seconds; past
# MAX_CONNECTIONS connections and requests in a process, new ones get a 503. A ground's 2,000
# live screens and phones fit one process well within it.
SAFEGROUND_HEADER_TIMEOUT_SECONDS = env.float("SAFEGROUND_HEADER_TIMEOUT_SECONDS", default=10.0)
SAFEGROUND_KEEP_ALIVE_SECONDS = env.int("SAFEGROUND_KEEP_ALIVE_SECONDS", default=5)
SAFEGROUND_MAX_CONNECTIONS = env.int("SAFEGROUND_MAX_CONNECTIONS", default=4096)
# Live sockets and reports to the log (matches/kept.py): each process keeps a fixture's ground and
# shares this many seconds, so a reconnect storm or a crisis minute's reports read them once; a
# withdrawn share refuses new sockets and reports within this bound (memberships, users and
# sessions are read every time).
# The catch-up's zone map is re-read at most this often too (incidents/catch_up.py).
SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS = env.float(
    "SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS", default=5.0
)
# Request bodies (safeground.errors.RequestChecks): a 413 past these. DATA_UPLOAD_MAX_MEMORY_SIZE
# bounds every body but uploads (Django's default, 2.5 MB: a log entry is a few kB, 500 offline
# scans ~150 kB); MAX_UPLOAD bounds a multipart upload whole (a photo is at most 10 MB).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)
SAFEGROUND_MAX_UPLOAD_BYTES = env.int("SAFEGROUND_MAX_UPLOAD_BYTES", default=11 * 1024 * 1024)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    # The API's docs page from ninja's own static files, not a CDN's with an inline script (which
    # the Content Security Policy refuses).
    "ninja",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "axes",
    "django_tasks_db",
    "safeground.accounts",
    "safeground.venues",
    "safeground.matches",
    "safeground.incidents",
    "safeground.live",
    "safeground.bans",
    "safeground.entry",
    "safeground.reports",
    "safeground.casework",
    "safeground.deployment",
    "safeground.decisions",
    "safeground.alerts",
    "safeground.partners",
    "safeground.supporters",
    "safeground.backups",
    "safeground.privacy",
    "safeground.exchange",
    "safeground.demo",
]

MIDDLEWARE = [
    "safeground.errors.RequestChecks",  # bodies over their limit, NUL characters: refused first
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language: the person's choice (a cookie, set_language), else their browser's.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "safeground.accounts.middleware.SecondFactorRequired",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "safeground.urls"
ASGI_APPLICATION = "safeground.asgi.application"
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_HOURS", default=0.25)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_LOCKOUT_TEMPLATE = "accounts/locked_out.html"
AXES_RESET_ON_SUCCESS = True

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [PACKAGE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
                "safeground.accounts.context_processors.safeground",
            ],
            # One clock on every page: the `hhmm` and `local_time` filters (safeground.clock).
            "builtins": ["safeground.clock"],
        },
    },
]


# SQLite for concurrent use: WAL, writers take the lock at BEGIN, and wait for it (STACK.md).
SQLITE_OPTIONS = {
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
}


def database_from_env(default_sqlite: Path) -> dict:
    """SQLite in WAL mode by default; DATABASE_URL selects PostgreSQL with a connection pool
    (or another SQLite file, with the same options).

    Under Django's ASGI handler every sync request ran in a fresh thread, so persistent
    connections leaked one per thread (STACK.md): PostgreSQL uses psycopg's pool instead and
    CONN_MAX_AGE stays 0. Requests now run on a fixed pool of threads (asgi.HTTP_THREADS), so
    SQLite keeps each thread's connection: opened afresh for every request it cost 3 ms of CPU
    under a flood of reports (0.35 ms on an idle file), a quarter of the server's CPU
    (docs/adr/0016, update of 6 December).
    """
    if env.str("DATABASE_URL", default=""):
        db = env.db("DATABASE_URL")
        if db["ENGINE"] == "django.db.backends.postgresql":
            from safeground.connection_checks import checked, given_back

            db.setdefault("OPTIONS", {})["pool"] = {
                "min_size": 2,
                "max_size": 16,
                "timeout": SAFEGROUND_DATABASE_WAIT_SECONDS,
                # psycopg's pool backs off 1, 2, 4 ... s between attempts for this long, then
                # starts again at the next request: an outage never leaves it waiting minutes.
                "reconnect_timeout": SAFEGROUND_DATABASE_RECONNECT_SECONDS,
                # The pool checks a connection (one empty statement) before a request gets it,
                # unless it came back from one less than a second ago: after an outage its idle
                # connections are dead, and each would fail one request (connection_checks).
                "check": checked,
                "reset": given_back,
            }
            db["CONN_MAX_AGE"] = 0
        elif db["ENGINE"] == "django.db.backends.sqlite3":
            db.setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)
            db["CONN_MAX_AGE"] = None
        return db
    default_sqlite.parent.mkdir(parents=True, exist_ok=True)
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": default_sqlite,
        "OPTIONS": SQLITE_OPTIONS,
        "CONN_MAX_AGE": None,
    }


# The league's ban exchange (safeground.exchange, docs/adr/0015-league-ban-exchange.md). An
# installation is a club's, or the league's exchange (`safeground exchange` sets the role), with
# a database of its own (its SQLite file by default, or its own DATABASE_URL).
SAFEGROUND_ROLE = env.str("SAFEGROUND_ROLE", default="club")
if SAFEGROUND_ROLE not in {"club", "exchange"}:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(f"SAFEGROUND_ROLE={SAFEGROUND_ROLE!r}: club or exchange")
# A club: the exchange's address (empty: not in the league, nothing published), the exchange's
# OPRF public key (hex) to pin, and the contact other clubs are shown with a match.
SAFEGROUND_EXCHANGE_URL = env.str("SAFEGROUND_EXCHANGE_URL", default="")
SAFEGROUND_EXCHANGE_PUBLIC_KEY = env.str("SAFEGROUND_EXCHANGE_PUBLIC_KEY", default="")
# Processes a club blinds and unblinds a large check in (its cores; 1: in the request's own).
SAFEGROUND_EXCHANGE_PROCESSES = env.int("SAFEGROUND_EXCHANGE_PROCESSES", default=2)
# The exchange: its OPRF key's seed (base64 of 32 bytes; derived from SECRET_KEY when unset) and
# the holders of one fixture it checks (the checks a club may begin: SAFEGROUND_LIMITS).
SAFEGROUND_EXCHANGE_OPRF_SEED = env.str("SAFEGROUND_EXCHANGE_OPRF_SEED", default="")
SAFEGROUND_EXCHANGE_HOLDERS_PER_FIXTURE = env.int(
    "SAFEGROUND_EXCHANGE_HOLDERS_PER_FIXTURE", default=120_000
)
# The holders a club may have evaluated in a day: the tickets it has imported for its coming
# fixtures times this margin (above the tickets themselves a check is flagged as unusual); and
# the bans a club may add to its publication in a day (its evaluations for it are bounded by
# tokens.FORMS times the bans it publishes plus these).
SAFEGROUND_EXCHANGE_TICKETS_MARGIN = env.float("SAFEGROUND_EXCHANGE_TICKETS_MARGIN", default=1.25)
SAFEGROUND_EXCHANGE_NEW_BANS_PER_DAY = env.int(
    "SAFEGROUND_EXCHANGE_NEW_BANS_PER_DAY", default=1_000
)
_SQLITE_FILE = "exchange.sqlite3" if SAFEGROUND_ROLE == "exchange" else "safeground.sqlite3"
DATABASES = {"default": database_from_env(BASE_DIR / "var" / _SQLITE_FILE)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
# English (UK) is the source; Welsh is complete for the steward, scanner and public pages.
# `make messages` refreshes the catalogues under LOCALE_PATHS (make lint fails on a stale one).
LANGUAGES = [("en-gb", "English"), ("cy", "Cymraeg")]
LOCALE_PATHS = [PACKAGE_DIR / "locale"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600  # a steward's choice outlasts the browser session
TIME_ZONE = "Europe/London"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
STATICFILES_DIRS = [PACKAGE_DIR / "static"]
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(BASE_DIR / "var" / "media")))

# Files go through Django's storage API. The evidence locker (casework) keeps its files in the
# "evidence" storage: MEDIA_ROOT/evidence/ by default, or an S3-compatible bucket when
# SAFEGROUND_EVIDENCE_S3_BUCKET is set (needs `pip install safeground[s3]`, i.e. django-storages;
# credentials, endpoint and region from the usual AWS_* variables boto3 reads).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "evidence": {"BACKEND": "django.core.files.storage.FileSystemStorage"},  # MEDIA_ROOT
}


def _evidence_on_s3() -> dict[str, Any]:
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env.str("SAFEGROUND_EVIDENCE_S3_BUCKET"),
            "endpoint_url": env.str("SAFEGROUND_EVIDENCE_S3_ENDPOINT", default="") or None,
            "default_acl": "private",
            "querystring_auth": True,
            "file_overwrite": False,  # a file is never replaced, only added to
        },
    }


if env.str("SAFEGROUND_EVIDENCE_S3_BUCKET", default=""):
    STORAGES["evidence"] = _evidence_on_s3()
# Evidence uploads: the largest file accepted (video is the big one), in megabytes.
SAFEGROUND_EVIDENCE_MAX_MB = env.int("SAFEGROUND_EVIDENCE_MAX_MB", default=500)

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the cookie-less meta tag; kept default
X_FRAME_OPTIONS = "DENY"

# Supporters' reports (the supporters app): reports of one block and category within GROUP_MINUTES
# of each other are one item of the control room's queue; a phone or device may send
# supporters.reporter reports and a network address supporters.network (SAFEGROUND_LIMITS);
# phone numbers, contacts and photos are erased
# RETENTION_DAYS after the match. The text line takes SMS_PROVIDER's webhook ("safeground",
# "twilio" or "vonage": supporters/sms_adapters.py), signed with SMS_SECRET (our HMAC-SHA256
# secret, Twilio's auth token or Vonage's signature secret, hashed as SMS_SIGNATURE_METHOD says
# for Vonage; no secret: every text is refused, naming the setting); SMS_PUBLIC_URL is the
# scheme and host the provider calls, when a proxy rewrites them (Twilio signs the full URL).
# SMS_BACKEND sends texts ("record": kept in the database and sent nowhere, for development
# and the tests).
SAFEGROUND_SUPPORTERS_GROUP_MINUTES = env.int("SAFEGROUND_SUPPORTERS_GROUP_MINUTES", default=5)
# The queue's fragment is made again at most this often per match, page and language (the
# screens waiting meanwhile are given the next copy, never an older one): the control room's own
# refresh gap (live-1.js REFRESH_GAP_MS).
SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS = env.float(
    "SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS", default=0.5
)
SAFEGROUND_SUPPORTERS_RETENTION_DAYS = env.int("SAFEGROUND_SUPPORTERS_RETENTION_DAYS", default=183)
SAFEGROUND_SUPPORTERS_SMS_PROVIDER = env.str(
    "SAFEGROUND_SUPPORTERS_SMS_PROVIDER", default="safeground"
)
SAFEGROUND_SUPPORTERS_SMS_SECRET = env.str("SAFEGROUND_SUPPORTERS_SMS_SECRET", default="")
SAFEGROUND_SUPPORTERS_SMS_SIGNATURE_METHOD = env.str(
    "SAFEGROUND_SUPPORTERS_SMS_SIGNATURE_METHOD", default="md5hash"
)
SAFEGROUND_SUPPORTERS_SMS_PUBLIC_URL = env.str("SAFEGROUND_SUPPORTERS_SMS_PUBLIC_URL", default="")
SAFEGROUND_SUPPORTERS_SMS_BACKEND = env.str("SAFEGROUND_SUPPORTERS_SMS_BACKEND", default="record")
# Seat codes of the first kind named the block by its database id (supporters/seats.py): still
# read, sending the supporter on to the seat's code of today, until every sheet is reprinted.
SAFEGROUND_SUPPORTERS_ID_SEAT_CODES = env.bool("SAFEGROUND_SUPPORTERS_ID_SEAT_CODES", default=True)
# Every limit on how often someone may do something (safeground/limits.py, ADR 0021), "N/period"
# with the period s, m, h or d, perhaps with a number before it ("5/10m": five in ten minutes),
# each from its own variable. Past one: 429 with Retry-After (docs/deploy.md).
# - api.person: the API calls one signed-in person may make, a bound on a runaway client (a
#   phone resending in a loop), far above what a person does; a device's scans are not counted.
# - supporters.reporter, supporters.network: the reports a phone or device, and a network
#   address, may send (a ground's Wi-Fi puts many phones behind one address).
# - supporters.reporter_urgent, supporters.network_urgent: the same, for a report of a life at
#   risk (medical help, a crush), held to these much higher bounds instead: a phone that used its
#   allowance on a flood can still report an emergency.
# - exchange.club, exchange.fixture: the checks a club may begin, and of one fixture.
# - exchange.sale: the point-of-sale checks a club may make (a ticket's holders as it is sold).
SAFEGROUND_LIMITS = limits_read(
    {
        "api.person": ("SAFEGROUND_API_RATE", "1800/m"),
        "supporters.reporter": ("SAFEGROUND_SUPPORTERS_REPORTER_RATE", "5/10m"),
        "supporters.network": ("SAFEGROUND_SUPPORTERS_NETWORK_RATE", "200/10m"),
        "supporters.reporter_urgent": ("SAFEGROUND_SUPPORTERS_REPORTER_URGENT_RATE", "30/10m"),
        "supporters.network_urgent": ("SAFEGROUND_SUPPORTERS_NETWORK_URGENT_RATE", "2000/10m"),
        "exchange.club": ("SAFEGROUND_EXCHANGE_CLUB_RATE", "30/h"),
        "exchange.fixture": ("SAFEGROUND_EXCHANGE_FIXTURE_RATE", "12/d"),
        "exchange.sale": ("SAFEGROUND_EXCHANGE_SALE_RATE", "3000/h"),
    }
)
# The limits kept in a cache count in each process's memory, or in Redis, shared by every
# process, when REDIS_URL is set.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "limits": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "limits"}
    ),
}

# Django 6's built-in Content Security Policy: no inline scripts anywhere.
from django.utils.csp import CSP  # noqa: E402

SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:", "blob:"],
    "connect-src": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

NINJA_PAGINATION_PER_PAGE = 50

# A database outage is a few lines from safeground.outage (began, still down, back after N s),
# not Django's line or traceback per refused request nor psycopg's pools' per failed attempt.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"outage": {"()": "safeground.outage.OutageFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["outage"]}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}
