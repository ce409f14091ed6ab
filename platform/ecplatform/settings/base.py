"""Settings shared by every environment. Values that differ per deployment come from the
environment (see .env.example); dev, test and production modules override only what they must."""

import os
import re
from datetime import timedelta
from pathlib import Path

import dj_database_url

from ecplatform import limits
from ecplatform.env import EnvError, env_bool, env_choice, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parents[3]
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

SECRET_KEY = env_str("SECRET_KEY")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "axes",
    # Authoring history and revert (courses/admin/history.py says why this package).
    "reversion",
    "accounts",
    "courses",
    "runner",
    "teaching",
    # LTI 1.3 Advantage as a tool: learning systems launch, place and grade (lti/tool.py says which library and why).
    "lti",
    "frontend",
]

MIDDLEWARE = [
    # /healthz and /readyz (ecplatform/health.py), before host checks and the HTTPS redirect: the
    # container's own healthcheck asks over plain HTTP on 127.0.0.1.
    "ecplatform.health.HealthMiddleware",
    # First: everything after it must see the client's address and scheme only as trusted proxies
    # report them (TRUSTED_PROXIES).
    "ecplatform.proxies.TrustedProxyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before the session: a launched session's cookies and framing, inside a learning system's iframe.
    "lti.middleware.EmbeddedSessionMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: turns a lockout into the answer accounts.lockout gives.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "ecplatform.urls"
WSGI_APPLICATION = "ecplatform.wsgi.application"
ASGI_APPLICATION = "ecplatform.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "frontend" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# SQLite file by default so a laptop needs nothing installed; DATABASE_URL selects PostgreSQL
# (postgres://user@host:5432/name, through psycopg 3).
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
    )
}
# PostgreSQL connections come from a pool in each process (psycopg's, through Django): a new
# connection costs PostgreSQL a process start, more than a whole warm run's queries. A pool, not
# persistent connections, because the web app is served over ASGI. DB_POOL_MAX bounds each process.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool("DB_POOL", True):
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": env_int("DB_POOL_MAX", 20),
        "timeout": 10,
    }
# No JIT compiling: the app's queries are short reads whose cost estimates grow with a course's size,
# and past PostgreSQL's jit_above_cost (the learners' export at 100,000 learners, the whole-course
# dashboard at about 120,000) each would spend 0.5 to 2.5 s compiling to save milliseconds.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("options", "-c jit=off")
# SQLite serves several processes at once (the web app's threads, the worker's run threads, the
# sweeper): WAL lets readers go on while one writes; a write transaction takes the write lock when it
# begins (IMMEDIATE), so a transaction that read first never fails to upgrade with "database is
# locked", it waits its turn for up to `timeout` seconds; synchronous=NORMAL is durable in WAL mode
# except for the last commits on a power cut, and saves an fsync per commit.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": env_int("SQLITE_BUSY_TIMEOUT_S", 30),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "frontend:catalog"
LOGOUT_REDIRECT_URL = "frontend:catalog"

# Failed logins (login page, admin login, POST /api/auth/token/) lock out a username, and separately
# a client address, after LOGIN_FAILURE_LIMIT failures; the lock lifts LOGIN_FAILURE_WINDOW_S after
# the last failure, or when an admin lifts it (Users: "Lift login lockout", or Access attempts).
# django-axes keeps the count (see accounts/lockout.py for why).
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
LOGIN_FAILURE_WINDOW_S = env_int("LOGIN_FAILURE_WINDOW_S", 900)
AUTHENTICATION_BACKENDS = [
    "accounts.lockout.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(seconds=LOGIN_FAILURE_WINDOW_S)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_USERNAME_CALLABLE = "accounts.lockout.username_for_lockout"
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
AXES_RESET_ON_SUCCESS = True
# Successful logins are not logged (a row per token request); failures are, for the admin.
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False

# Proxy headers (X-Forwarded-For, X-Forwarded-Proto, X-Forwarded-Host) count only when they come
# from one of these addresses or networks (comma-separated, e.g. "10.0.0.5,172.16.0.0/12"); from
# anyone else they are dropped before any code reads them. Empty: no proxy is trusted.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])

# API tokens (POST /api/auth/token/) expire this many days after they were issued: an expired token
# answers 401, and the next POST /api/auth/token/ issues a fresh one.
API_TOKEN_TTL_DAYS = env_int("API_TOKEN_TTL_DAYS", 30)

# Self sign-up (/accounts/signup/). Off: only people with a cohort invite link can create an account.
SIGNUP_OPEN = env_bool("SIGNUP_OPEN", True)

REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Email: console by default; EMAIL_URL-style settings select SMTP.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "EasyCompilers <noreply@localhost>")

REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header makes a refused token (an expired one) a 401, which
    # tells an API client to ask for a new token, not a 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "ecplatform.api.AutoSchema",
    "EXCEPTION_HANDLER": "ecplatform.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "EasyCompilers API",
    "DESCRIPTION": "Courses, exercises and sandboxed code runs.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

# Runs of learners' code (runner app). Every cap on a run, and the rule for overriding it, is in
# ecplatform/limits.py; the caps below are read through it (a value outside its range stops the
# process here). The sandbox's own wall limit is capped at RUNNER_WALL_CAP_S; every Celery limit
# below sits above it, so the sandbox always stops a run first and Celery's limits only catch a
# worker that hangs outside a sandbox.
RUNNER_BACKEND = env_choice("RUNNER_BACKEND", "auto", ("auto", "docker", "local"))
# docker backend: the sandbox image, and whether this worker's sandboxes get GPUs (a `gpu` worker).
RUNNER_DOCKER_IMAGE = env_str("RUNNER_DOCKER_IMAGE", "easycompilers-sandbox:latest")
# docker backend: which deployment's sandboxes a worker makes, stops and sweeps (the value of each
# container's easycompilers.sandbox label). Two deployments on one Docker engine (a CI stack beside a
# test session, staging beside production) then never remove each other's sandboxes as strays.
RUNNER_SANDBOX_SCOPE = env_str("RUNNER_SANDBOX_SCOPE", "1")
if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}", RUNNER_SANDBOX_SCOPE):
    raise EnvError(f"RUNNER_SANDBOX_SCOPE={RUNNER_SANDBOX_SCOPE!r}: letters, digits, '_', '.' and '-', at most 63")
RUNNER_GPU = env_bool("RUNNER_GPU", False)
# A GPU worker's devices (indexes, GPU UUIDs or MIG slice UUIDs): each GPU sandbox gets one of them.
RUNNER_GPU_DEVICES = env_list("RUNNER_GPU_DEVICES", ["0"])
# The share of its GPU's memory a run may allocate (the harness sets torch's per-process cap from it).
RUNNER_GPU_MEMORY_FRACTION = float(env_str("RUNNER_GPU_MEMORY_FRACTION", "0.9"))
# local backend: the venv (torch, numpy, matplotlib) mounted read-only in the sandbox; empty = the
# worker's own.
RUNNER_LOCAL_RUNTIME = env_str("RUNNER_LOCAL_RUNTIME", "")
# local backend, worker running as root: the host uid its sandboxes run as (an unused one that owns
# nothing; never 0). A worker that is not root runs sandboxes as itself.
RUNNER_LOCAL_UID = env_int("RUNNER_LOCAL_UID", 63999)
RUNNER_WALL_CAP_S = limits.WALL_CAP_S
# The largest program a learner may run, and save (one value for both).
RUNNER_MAX_CODE_BYTES = limits.cap_from_env(limits.CODE_BYTES)
# Per learner: runs queued or running at once, and runs started in any 60 seconds (429 beyond).
RUNNER_MAX_ACTIVE_PER_LEARNER = limits.cap_from_env(limits.ACTIVE_RUNS_PER_LEARNER)
RUNNER_MAX_RUNS_PER_MINUTE = limits.cap_from_env(limits.RUNS_PER_MINUTE)
# Event streams (GET /api/runs/<id>/events/) one learner may hold open at once (429 beyond); each
# holds a slot in Redis that it renews while open and that expires RUNNER_STREAM_SLOT_TTL_S after
# its web process stopped renewing it.
RUNNER_MAX_STREAMS_PER_LEARNER = limits.cap_from_env(limits.STREAMS_PER_LEARNER)
RUNNER_STREAM_SLOT_TTL_S = env_int("RUNNER_STREAM_SLOT_TTL_S", 60)
# Stored copies of stdout and stderr are cut at this many characters (the sandbox caps output too).
RUNNER_TEXT_CAP = limits.cap_from_env(limits.TEXT_CHARS)
# A running run's worker touches heartbeat_at this often; the sweeper ends runs whose heartbeat is
# older than RUNNER_STALE_AFTER_S, and runs still queued after RUNNER_QUEUED_MAX_S (a lost message).
RUNNER_HEARTBEAT_S = env_int("RUNNER_HEARTBEAT_S", 2)
RUNNER_STALE_AFTER_S = env_int("RUNNER_STALE_AFTER_S", 30)
RUNNER_QUEUED_MAX_S = env_int("RUNNER_QUEUED_MAX_S", 900)
RUNNER_SWEEP_INTERVAL_S = env_int("RUNNER_SWEEP_INTERVAL_S", 30)
# Warm sandboxes (sandbox/pool.py), per worker process and backend: RUNNER_WARM_SPARES started
# ahead with torch imported (about 175 MiB each), at most RUNNER_WARM_MAX in all (spares and
# learners' own), a learner's sandbox closed after RUNNER_WARM_IDLE_S without a run, any sandbox
# after RUNNER_WARM_MAX_AGE_S. With none ready a run starts cold; it never shares a sandbox. The
# defaults fit a 2-core machine: starting a sandbox takes a core for about 3 seconds.
RUNNER_WARM = env_bool("RUNNER_WARM", True)
RUNNER_WARM_SPARES = env_int("RUNNER_WARM_SPARES", 2)
RUNNER_WARM_MAX = env_int("RUNNER_WARM_MAX", 6)
RUNNER_WARM_IDLE_S = env_int("RUNNER_WARM_IDLE_S", 300)
RUNNER_WARM_MAX_AGE_S = env_int("RUNNER_WARM_MAX_AGE_S", 3600)
# Several worker hosts (runner/routing.py): each consumes the shared queue and `<queue>@RUNNER_HOST`
# (empty: the machine's name, a container's id under Compose; unique per host). A learner's run goes
# to the host holding their warm sandbox, and to the shared queue if that host has not taken it
# within RUNNER_AFFINITY_WAIT_S seconds (dead or busy).
RUNNER_HOST = env_str("RUNNER_HOST", "")
RUNNER_AFFINITY_WAIT_S = env_int("RUNNER_AFFINITY_WAIT_S", 5)

# Cold sandboxes starting at once in one worker process (each pays a Python start and a torch import,
# about a CPU-second): more than the machine's cores only makes each slower. Warm runs do not count.
RUNNER_COLD_CONCURRENCY = env_int("RUNNER_COLD_CONCURRENCY", os.cpu_count() or 2)

# Celery's broker: the Redis named by REDIS_URL (production, CI, and `make run`, which starts one of
# its own on a Unix socket in VAR_DIR: scripts/serve.sh), else kombu's file-system transport.
# Chosen by measurement (bench/run_latency.py --embedded: 30 sequential warm runs, local backend, one
# learner, SQLite unless said; p50 / p95 ms; idle CPU of the web app, worker and broker):
#   PostgreSQL + Redis                    41 /   52 ms, idle CPU 0.2 % (not counting its servers)
#   embedded Redis                        35 /   45 ms, idle CPU 0.4 %
#   file system, polled every 1 s       1060 / 1104 ms, idle CPU 0.4 %
#   file system, polled every 100 ms     313 /  436 ms, idle CPU 0.4 %
#   file system, polled every 20 ms      306 /  336 ms, idle CPU 1.0 %
#   SQL broker on SQLite, 100 ms         319 /  350 ms, idle CPU 2.9 %
#   SQL broker on SQLite, 20 ms          282 /  318 ms, idle CPU 10.5 %
# A polling broker makes each run wait for its next poll, and without Redis the run's event stream
# polls the Run row every 250 ms as well (runner/apis.py), which is most of the 300 ms; the SQL broker
# also costs CPU while idle. Redis hands a message over as it is published, costs nothing idle, and
# also carries run events and the cache. The file-system transport stays for a machine without
# redis-server (a degraded part, said at start and on the admin's home page), polled every 20 ms:
# a run waits 20 ms for it instead of a second, for 1 % of a core.
BROKER_POLL_INTERVAL_S = float(env_str("BROKER_POLL_INTERVAL_S", "0.02"))
if REDIS_URL:
    # redis-py (events, cache) reads unix:///path/redis.sock; kombu spells it redis+socket://.
    CELERY_BROKER_URL = REDIS_URL
    if REDIS_URL.startswith("unix://"):
        CELERY_BROKER_URL = "redis+socket://" + REDIS_URL.removeprefix("unix://")
    # A message not acknowledged within this time goes back to the queue: well above the hard time
    # limit, so only a dead worker's message is redelivered (and then seen as "worker lost").
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
else:
    _broker = VAR_DIR / "broker"
    # kombu's file-system transport expects its folders to exist before a worker declares queues.
    for _folder in ("queue", "processed", "control"):
        (_broker / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://localhost/"
    # kombu's file-system transport, with messages written whole (ecplatform/celery.py says why).
    CELERY_BROKER_TRANSPORT = "ecplatform.celery:FilesystemTransport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker / "queue"),
        "data_folder_out": str(_broker / "queue"),
        "processed_folder": str(_broker / "processed"),
        "control_folder": str(_broker / "control"),
        "store_processed": False,
        "polling_interval": BROKER_POLL_INTERVAL_S,
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_DEFAULT_QUEUE = "cpu"
# A run's message is acknowledged after the run, one message per worker process at a time; if the
# process dies the message is redelivered once, and the run service ends that run ("worker lost")
# instead of running it again, so a poison run cannot loop.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker is one process with a thread per run: a run mostly waits on its sandbox, and one process
# keeps one warm pool, so a learner's next run finds their sandbox whichever thread takes it.
# (Celery enforces no task time limits in a thread pool: the sandbox's wall limit ends every run,
# and the limits below apply where a worker is started with `-P prefork`.)
CELERY_WORKER_POOL = env_choice("WORKER_POOL", "threads", ("threads", "prefork", "solo"))
CELERY_WORKER_CONCURRENCY = env_int("WORKER_CONCURRENCY", 8)
CELERY_TASK_SOFT_TIME_LIMIT = RUNNER_WALL_CAP_S + 30
CELERY_TASK_TIME_LIMIT = RUNNER_WALL_CAP_S + 60
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_TIMEOUT = 2
# A submission answers 503 within a second when the broker is down, instead of hanging.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
# The dashboards count a run, an answer or progress just after its learner has the result
# (teaching.services.outbox); one whose process died in between is counted by this sweep, once its
# note is this old.
DASHBOARD_COUNT_SWEEP_S = env_int("DASHBOARD_COUNT_SWEEP_S", 10)
DASHBOARD_COUNT_LEFT_AFTER_S = env_int("DASHBOARD_COUNT_LEFT_AFTER_S", 5)
# LTI scores (lti/services/scores.py): a post that fails is tried again after LTI_SCORE_RETRY_FIRST_S,
# then twice as long each time up to LTI_SCORE_RETRY_MAX_S, for as long as it takes (staff see it in
# the admin meanwhile); a retry within LTI_SCORE_RETRY_QUEUED_MAX_S is queued at once with its delay,
# a later one left to the sweep, which also works out scores whose note is LTI_SCORE_NOTE_LEFT_AFTER_S
# old (a lost message, a dead worker).
LTI_SCORE_RETRY_FIRST_S = env_int("LTI_SCORE_RETRY_FIRST_S", 10)
LTI_SCORE_RETRY_MAX_S = env_int("LTI_SCORE_RETRY_MAX_S", 3600)
LTI_SCORE_RETRY_QUEUED_MAX_S = env_int("LTI_SCORE_RETRY_QUEUED_MAX_S", 300)
LTI_SCORE_SWEEP_S = env_int("LTI_SCORE_SWEEP_S", 60)
LTI_SCORE_NOTE_LEFT_AFTER_S = env_int("LTI_SCORE_NOTE_LEFT_AFTER_S", 30)
# A platform's access token is kept this long between score posts and roster reads (LTI tokens
# live an hour; kept well within that).
LTI_ACCESS_TOKEN_KEEP_S = env_int("LTI_ACCESS_TOKEN_KEEP_S", 600)
CELERY_BEAT_SCHEDULE = {
    "runner-sweep": {"task": "runner.run_sweep", "schedule": float(RUNNER_SWEEP_INTERVAL_S)},
    "teaching-counts-left": {"task": "teaching.counts_left", "schedule": float(DASHBOARD_COUNT_SWEEP_S)},
    "lti-scores-due": {"task": "lti.scores_due", "schedule": float(LTI_SCORE_SWEEP_S)},
}

LOG_LEVEL = env_str("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # django-axes logs every failed login at INFO and WARNING; lockouts are what an operator needs.
    "loggers": {"axes": {"level": "ERROR"}},
}

# Instructor dashboards: "active" means seen in the last DASHBOARD_ACTIVE_DAYS; a learner looks
# stuck after DASHBOARD_STUCK_FAILED_RUNS failed runs or DASHBOARD_STUCK_IDLE_DAYS without progress.
DASHBOARD_ACTIVE_DAYS = env_int("DASHBOARD_ACTIVE_DAYS", 7)
DASHBOARD_STUCK_FAILED_RUNS = env_int("DASHBOARD_STUCK_FAILED_RUNS", 8)
DASHBOARD_STUCK_IDLE_DAYS = env_int("DASHBOARD_STUCK_IDLE_DAYS", 14)
DASHBOARD_STUCK_SHOWN = env_int("DASHBOARD_STUCK_SHOWN", 50)
