"""The shared cache (CACHE_URL=redis://...) fails open: while Redis cannot be reached, a read
finds nothing and a write is dropped, logged, so that what uses the cache (DRF's throttles, the
worker pings) carries on without it instead of answering 500.

After a failure the cache is left alone for CACHE_RETRY_SECONDS (a request never waits on a dead
server's timeouts call after call), then tried again: recovery needs no restart.
"""

import logging
import threading
import time

from django.conf import settings
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError, TimeoutError

logger = logging.getLogger("proofmark.cache")
UNREACHABLE = (ConnectionError, TimeoutError, OSError)


def _fail_open(name: str, answer):
    method = getattr(RedisCache, name)

    def guarded(self, *args, **kwargs):
        if time.monotonic() < self._away_until:
            return self._answer(name, answer, args, kwargs)
        try:
            return method(self, *args, **kwargs)
        except UNREACHABLE as exc:
            with self._lock:
                self._away_until = time.monotonic() + settings.CACHE_RETRY_SECONDS
            logger.warning(
                "cache unreachable, %s answered without it: %s: %s", name, type(exc).__name__, exc
            )
            return self._answer(name, answer, args, kwargs)

    guarded.__name__ = name
    guarded.__doc__ = f"RedisCache.{name}, answering {answer!r} while Redis is away."
    return guarded


class FailOpenRedisCache(RedisCache):
    """Django's Redis cache, whose operations answer "nothing there" while Redis is away
    (`incr` raises ValueError, as for a missing key)."""

    def __init__(self, server, params):
        options = params.setdefault("OPTIONS", {})
        # a dead host costs a request a fraction of a second, not the socket's default wait
        options.setdefault("socket_connect_timeout", 0.5)
        options.setdefault("socket_timeout", 1.0)
        super().__init__(server, params)
        self._away_until = 0.0
        self._lock = threading.Lock()

    @staticmethod
    def _answer(name, answer, args, kwargs):
        if name == "get":  # the caller's default
            return kwargs.get("default", args[1] if len(args) > 1 else None)
        if name == "incr":
            raise ValueError(f"Key {args[0]!r} not found (the cache is unreachable).")
        return type(answer)() if isinstance(answer, dict | list) else answer  # a fresh one

    add = _fail_open("add", False)
    get = _fail_open("get", None)
    set = _fail_open("set", None)
    touch = _fail_open("touch", False)
    delete = _fail_open("delete", False)
    get_many = _fail_open("get_many", {})
    has_key = _fail_open("has_key", False)
    incr = _fail_open("incr", None)
    set_many = _fail_open("set_many", [])
    delete_many = _fail_open("delete_many", None)
    clear = _fail_open("clear", False)
