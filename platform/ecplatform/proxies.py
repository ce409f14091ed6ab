"""Proxy headers count only when a configured proxy sent them.

X-Forwarded-For and X-Forwarded-Proto are plain request headers: anyone can send them. Trusted
from everyone, a password guesser picks a new "address" per try and never meets the per-address
lockout, and a plain-HTTP client claims HTTPS. So from an address outside TRUSTED_PROXIES they are
dropped before anything reads them; from a trusted proxy the client's address is the right-most
X-Forwarded-For entry that is not itself a trusted proxy, and X-Forwarded-Proto is kept for
SECURE_PROXY_SSL_HEADER.
"""

import ipaddress
from functools import cache

from django.conf import settings

FORWARDED_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST", "HTTP_FORWARDED")


@cache
def _networks(entries: tuple[str, ...]) -> tuple:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)


def is_trusted_proxy(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


def client_address(remote_addr: str, forwarded_for: str) -> str:
    """The first address, from the right, that no trusted proxy accounts for."""
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not is_trusted_proxy(hop):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return remote_addr  # garbage from the client: keep the proxy's own address
    return remote_addr


class TrustedProxyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        meta = request.META
        remote = meta.get("REMOTE_ADDR", "")
        if is_trusted_proxy(remote):
            if meta.get("HTTP_X_FORWARDED_FOR"):
                meta["REMOTE_ADDR"] = client_address(remote, meta["HTTP_X_FORWARDED_FOR"])
        else:
            for header in FORWARDED_HEADERS:
                meta.pop(header, None)
        return self.get_response(request)
