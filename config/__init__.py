"""The project's settings and wiring: settings, URLs (pages and API), the Celery app, WSGI/ASGI
and gunicorn's settings. The runtime code every app shares is in `core/`.

The Celery app (config.celery) is not imported here: `celery -A config` finds `config.celery.app`
by itself, and the processes that send tasks load it on their first send
(core.broker.celery_app), so that a management command or a web request that queues nothing
never imports Celery and Kombu (about 60 ms of every start-up).
"""
