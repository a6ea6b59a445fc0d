"""Whether an address is this machine's loopback: the only clients the proxy serves, and the
only upstreams it reaches over plain http without a warning."""

from __future__ import annotations

import ipaddress


def is_loopback(address: str | None) -> bool:
    """True for 127.0.0.0/8 and ::1 (and ::ffff:127.x)."""
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return (mapped or ip).is_loopback


def is_loopback_host(host: str | None) -> bool:
    """``is_loopback``, or the name ``localhost``."""
    return host is not None and (host.lower() == "localhost" or is_loopback(host))
