"""gunicorn's settings for the Procfile's `web` process (`gunicorn --config python:config.gunicorn
config.wsgi`): the usual Procfile conventions, PORT and WEB_CONCURRENCY, from the environment.

Sync workers: a request is short (a judgement costs a few ms of CPU) and holds one persistent
database connection per worker. One or two workers per core: on the 2-core benchmark machine
(benchmarks/bench_http.py, PostgreSQL on the same cores) 2 and 4 workers served the same
judgements a second, so the default is 2; a web machine without the database can take 2 a core.
GUNICORN_THREADS above 1 makes them gthread workers, which keep clients' connections open: on
that machine 2 workers of 4 threads served 10-35% fewer judgements than 2 sync workers (the
threads of a worker share one interpreter lock), so use them only where clients are slow to
send and no proxy buffers them.
"""

import os

# The web process's bounds on a statement and on a wait for a lock (config/settings.py), read
# when the application is loaded below: well inside `timeout`, so a request stuck on a lock
# answers 503 with Retry-After and the worker lives.
os.environ.setdefault("DB_STATEMENT_TIMEOUT", "30s")
os.environ.setdefault("DB_LOCK_TIMEOUT", "10s")

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
worker_class = "gthread" if threads > 1 else "sync"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
# Requests are logged by Django as JSON (core.middleware.RequestLogMiddleware).
accesslog = None
errorlog = "-"
# Requests gunicorn refuses itself, before Django sees them, get its own plain HTML error (the
# README's "Deploying" lists them): a request line over limit_request_line bytes is a 414, over
# limit_request_fields headers or a header over limit_request_field_size bytes a 431. The request
# line is raised to gunicorn's largest (default 4094): a long query string of ids still fits.
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190
# The application (config.wsgi: settings, apps, every URL and view) is imported once, in the
# master, and each worker is forked from it warm, instead of importing it all again, and paying
# the first request's imports, each time a worker starts. A deploy restarts the process (a HUP
# forks new workers from the code already loaded).
preload_app = True
# A worker is replaced after this many requests (plus jitter), so that no leak grows for ever.
# Measured (issue 27): a worker's RSS over 20,000 requests of next + submit on a 20,000-item
# campaign, recycling off, went 81 MB at start, 86 MB after 2,000 (caches filling), 88.8 MB at
# 10,000, 89.2 MB at 20,000 (0.4 MB over the last 10,000): no leak, only warm-up. The former 5,000 replaced each worker every
# minute under load, each time a cold worker and a new database connection, for nothing;
# 100,000 keeps a bound on what an unseen leak could grow without paying that.
max_requests = 100_000
max_requests_jitter = 10_000

# Which peers' X-Forwarded-Proto (and the like) gunicorn believes follows the project's
# TRUSTED_PROXIES (core/proxies.py), never gunicorn's default of localhost: their addresses or
# networks; a count (the proxies' addresses unknown, as behind a cloud balancer) trusts the
# direct peer, which that count says is a proxy; none set trusts no one.
_trusted = os.environ.get("TRUSTED_PROXIES", "").strip()
if _trusted.isdigit():
    forwarded_allow_ips = "*" if int(_trusted) > 0 else ""
else:
    forwarded_allow_ips = ",".join(part.strip() for part in _trusted.split(",") if part.strip())
proxy_allow_ips = forwarded_allow_ips
# No control socket: nothing here uses gunicornc, and two instances on one host would share
# gunicorn's default one (~/.gunicorn/gunicorn.ctl).
control_socket_disable = True
