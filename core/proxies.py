"""The client's address behind a load balancer: the one place it is worked out, for the login
lockout (django-axes), the API throttles and the request log.

TRUSTED_PROXIES names the proxies in front of the app, either as a count (`1`: one balancer)
or as addresses and networks (`10.0.0.0/8,192.168.1.5`). `X-Forwarded-For` is read only when
the direct peer is one of them, from the right, skipping the trusted hops: the first address
no trusted proxy wrote is the client. Without the setting the direct peer is the client and the
header is ignored, so that no client can choose the address it is counted under.
"""

import ipaddress

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_proxies(value: str) -> int | tuple[Network, ...]:
    """The setting, read: a count of proxies, or the networks they are in (empty: none)."""
    value = value.strip()
    if value.isdigit():
        return int(value)
    networks = []
    for part in filter(None, (part.strip() for part in value.split(","))):
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"TRUSTED_PROXIES: {part!r} is neither a count nor an address or network."
            ) from exc
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def client_address(request) -> str:
    """The client's address, as the trusted proxies saw it (the direct peer without them)."""
    peer = request.META.get("REMOTE_ADDR", "")
    trusted = settings.TRUSTED_PROXIES
    if not trusted:
        return peer
    forwarded = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    chain = [hop for hop in forwarded if hop] + [peer]
    if isinstance(trusted, int):
        # the last `trusted` hops are our proxies': the one before them wrote the client
        client = chain[-(trusted + 1)] if len(chain) > trusted else chain[0]
        return client if _address(client) else peer
    seen = peer
    for hop in reversed(chain):
        address = _address(hop)
        if address is None:  # not an address: what the last trusted proxy saw is all we know
            return seen
        if not any(address in network for network in trusted):
            return hop
        seen = hop
    return seen
