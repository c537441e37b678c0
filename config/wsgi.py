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
# and the Celery app the web sends jobs with, its task modules, result backend and broker's
# transport (Kombu's and its client library); a command loads them on its first send only. Left
# to the first job each worker sent, they cost that request 0.12-0.14 s of CPU: an export's
# first POST through the WSGI handler 0.16-0.18 -> 0.04 s, a fresh worker's first 2,000-row
# upload 0.36-0.38 -> 0.21-0.23 s of web CPU with the line above (RESULTS.md, issue 40).
tasks_app = celery_app()
tasks_app.autodiscover_tasks(force=True)
tasks_app.finalize()  # the tasks bound to the app
tasks_app.backend  # noqa: B018 (the result backend's class, found among the entry points)
with tasks_app.connection_for_write() as broker:  # not connected: only its class is loaded
    broker.get_transport_cls()
connections.close_all()
# What is loaded now lives as long as the process: out of the garbage collector's generations, so
# that its full passes (which py-spy showed inside the submissions' allocations) walk only what
# requests make, and the forked workers share these pages instead of copying them on a pass.
gc.freeze()
