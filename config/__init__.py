"""The project's settings, URLs and shared infrastructure.

The Celery app (config.celery) is not imported here: `celery -A config` finds `config.celery.app`
by itself, and the processes that send tasks load it on their first send
(config.broker.celery_app), so that a management command or a web request that queues nothing
never imports Celery and Kombu (about 60 ms of every start-up).
"""
