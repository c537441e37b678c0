import gc
import os

from django.core.wsgi import get_wsgi_application
from django.db import connections
from django.urls import get_resolver, reverse

from core.broker import celery_app

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# Every app's URLs and views are imported now, not on the first request each worker serves:
# gunicorn loads this module once before it forks its workers (config.gunicorn.preload_app), so
# a new worker starts warm. Nothing here opens a database connection; none is handed to a fork.
get_resolver().url_patterns  # noqa: B018 (the import is the point)
reverse("healthz")  # and the table of names every reverse() looks up, built on the first call
# and the Celery app the web sends jobs with (a command loads it on its first send only), with
# the apps' task modules and the broker's transport (Kombu's and its client library), which the
# first job a worker sent used to load: with the line above, a fresh worker's first 2,000-row
# upload took 0.36-0.38 s of web CPU, now 0.21-0.23 s (benchmarks/RESULTS.md, issue 40).
tasks = celery_app()
tasks.loader.import_default_modules()
with tasks.connection_for_write() as broker:  # not connected: only its class is loaded
    broker.get_transport_cls()
connections.close_all()
# What is loaded now lives as long as the process: out of the garbage collector's generations, so
# that its full passes (which py-spy showed inside the submissions' allocations) walk only what
# requests make, and the forked workers share these pages instead of copying them on a pass.
gc.freeze()
