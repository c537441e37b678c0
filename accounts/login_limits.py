"""Log-in limits above django-axes' lock of one user name from one address (AXES_*):

- **per address, across names**: an address that failed LOGIN_ADDRESS_LIMIT log-ins within
  LOGIN_WINDOW_MINUTES (whatever the names) is refused (429, with when to try again), so one
  address cannot spray a password over every account;
- **per user name, across addresses**: a name that failed LOGIN_NAME_SLOW log-ins within the
  window is slowed (each further try waits twice as long as the one before, 429 with
  Retry-After), and at LOGIN_NAME_LOCK it is locked until an admin unlocks it
  (`manage.py login_unlock NAME`), so that many addresses cannot guess one account's password.

The counts live in the cache (Redis in a deployment, CACHE_URL: shared by every web process;
the lock has no expiry there). Addresses are the client's as the trusted proxies give them
(core.proxies), so behind a balancer each client is counted, not the balancer. API tokens are
limited per address by core.throttles (a wrong token counts against the address's rate)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from core.proxies import client_address


@dataclass(frozen=True)
class Refusal:
    message: str
    retry_after: int | None  # seconds; None: until an admin unlocks


def _key(kind: str, value: str) -> str:
    digest = hashlib.sha256(value.casefold().encode()).hexdigest()[:32]
    return f"login-limit:{kind}:{digest}"


def _window() -> int:
    return settings.LOGIN_WINDOW_MINUTES * 60


def _count(key: str) -> int:
    try:
        return cache.incr(key)
    except ValueError:  # not there yet
        cache.set(key, 1, _window())
        return 1


def no_password_tried(request, credentials: dict | None) -> bool:
    """A log-in that tried no password (a single sign-on, accounts.oidc, whose credentials are
    its nonce and PKCE verifier): neither these limits nor django-axes count it or refuse it
    (AXES_WHITELIST_CALLABLE); the provider guards its own passwords."""
    return credentials is not None and "username" not in credentials


def login_failed(request, username: str) -> None:
    """Counts a failed log-in against the client's address and the user name."""
    if request is None:
        return
    _count(_key("address", client_address(request)))
    failures = _count(_key("name", username))
    cache.set(_key("name-last", username), time.time(), _window())
    if failures >= settings.LOGIN_NAME_LOCK:
        cache.set(_key("locked", username), True, None)


def login_succeeded(username: str) -> None:
    """A right password: the name's failures are forgotten (not a lock: only an admin lifts it)."""
    cache.delete_many([_key(kind, username) for kind in ("name", "name-last")])


def login_refusal(request, username: str) -> Refusal | None:
    """Why a log-in may not be tried now, or None."""
    if cache.get(_key("locked", username)):
        return Refusal(
            "This account is locked after many failed log-ins from several addresses. "
            "Ask an admin to unlock it.",
            None,
        )
    address = cache.get(_key("address", client_address(request)), 0)
    if address >= settings.LOGIN_ADDRESS_LIMIT:
        return Refusal(
            f"Too many failed log-ins from your address: try again in "
            f"{settings.LOGIN_WINDOW_MINUTES} minutes.",
            _window(),
        )
    failures = cache.get(_key("name", username), 0)
    if failures >= settings.LOGIN_NAME_SLOW:
        wait = min(2 ** (failures - settings.LOGIN_NAME_SLOW + 1), _window())
        since = time.time() - (cache.get(_key("name-last", username)) or 0)
        if since < wait:
            seconds = int(wait - since) + 1
            return Refusal(
                f"Log-ins to this account are slowed after many failures: try again in "
                f"{seconds} seconds.",
                seconds,
            )
    return None


def login_unlock(username: str) -> bool:
    """Unlocks a user name and forgets its failures; whether it was locked."""
    was = bool(cache.get(_key("locked", username)))
    cache.delete_many([_key(kind, username) for kind in ("locked", "name", "name-last")])
    return was
