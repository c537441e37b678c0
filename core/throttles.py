"""The API's throttles (REST_FRAMEWORK's DEFAULT_THROTTLE_CLASSES), each keyed on the client's
address as the trusted proxies give it (core.proxies), and the throttle on failed
authentication: a wrong token counts against its address's anonymous rate (API_ANON_RATE), so
guessing tokens meets the same 429 as any anonymous caller."""

from rest_framework import throttling
from rest_framework.exceptions import Throttled

from core.proxies import client_address


class UserRateThrottle(throttling.UserRateThrottle):
    def get_ident(self, request):
        return client_address(request)


class AnonRateThrottle(throttling.AnonRateThrottle):
    def get_ident(self, request):
        return client_address(request)


class FailedAuthenticationThrottle(AnonRateThrottle):
    """The anonymous bucket of an address, for a request whose credentials were refused (its
    user is not known yet, so the key is made without asking for it)."""

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def failed_authentication_count(request) -> None:
    """Counts a refused credential against its address; raises Throttled (429 with
    `Retry-After`) once the address is over its anonymous rate."""
    throttle = FailedAuthenticationThrottle()
    if not throttle.allow_request(request, None):
        raise Throttled(wait=throttle.wait())
