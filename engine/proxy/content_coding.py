"""A request body's ``Content-Encoding``: decoded to read or rewrite it, encoded again the same
way when a plan changed it. The proxy forwards the agent's own bytes whenever nothing changes, so
an encoding ctxtop cannot decode (zstd or br without their module, a made-up one) costs only the
measurement and the plan, never the request.

Decoding is bounded: a body that decodes to more than the limit is treated as one that cannot be
decoded (a small compressed body can expand to gigabytes)."""

from __future__ import annotations

import gzip
import importlib
import zlib
from collections.abc import Callable

Coder = Callable[[bytes], bytes]
IDENTITY = "identity"


def codings(header: str | None) -> list[str]:
    """The codings a ``Content-Encoding`` value lists, in the order they were applied."""
    names = [name.strip().lower() for name in (header or "").split(",")]
    return [name for name in names if name and name != IDENTITY]


def _inflate(body: bytes, wbits: int, limit: int) -> bytes:
    decoder = zlib.decompressobj(wbits)
    plain = decoder.decompress(body, limit + 1)
    if len(plain) > limit or decoder.unconsumed_tail:
        raise ValueError("decodes to more than the limit")
    if not decoder.eof or decoder.unused_data:
        raise ValueError("truncated, or more than one member")
    return plain


def _deflate_decode(body: bytes, limit: int) -> bytes:
    try:
        return _inflate(body, zlib.MAX_WBITS, limit)  # RFC 9110's "deflate": zlib-wrapped
    except zlib.error:
        return _inflate(body, -zlib.MAX_WBITS, limit)  # what some clients send: raw deflate


def _module(*names: str) -> object | None:
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _optional(coding: str) -> tuple[Callable[[bytes, int], bytes], Coder] | None:
    """br and zstd, when a module for them is installed (none is a dependency of ctxtop)."""
    if coding == "br":
        module = _module("brotli", "brotlicffi")
    elif coding == "zstd":
        module = _module("compression.zstd", "backports.zstd")
    else:
        return None
    if module is None:
        return None
    decompress: Callable[[bytes], bytes] = module.decompress  # type: ignore[attr-defined]
    compress: Coder = module.compress  # type: ignore[attr-defined]

    def decode(body: bytes, limit: int) -> bytes:
        plain = decompress(body)  # these modules' one-shot call takes no bound: check after
        if len(plain) > limit:
            raise ValueError("decodes to more than the limit")
        return plain

    return decode, compress


def _coder(coding: str) -> tuple[Callable[[bytes, int], bytes], Coder] | None:
    if coding in ("gzip", "x-gzip"):
        return (
            lambda body, limit: _inflate(body, 16 + zlib.MAX_WBITS, limit),
            lambda body: gzip.compress(body, mtime=0),  # the same bytes for the same body
        )
    if coding == "deflate":
        return _deflate_decode, zlib.compress
    return _optional(coding)


def decoded(body: bytes, header: str | None, limit: int) -> bytes | None:
    """``body`` with its codings undone, or None when one is unknown, the body is damaged or it
    decodes to more than ``limit`` bytes."""
    for coding in reversed(codings(header)):
        coder = _coder(coding)
        if coder is None:
            return None
        try:
            body = coder[0](body, limit)
        except Exception:  # damaged, too big, or an optional module's own error class
            return None
    return body


def encoded(body: bytes, header: str | None) -> bytes | None:
    """``body`` encoded as ``header`` says (None: a coding ctxtop cannot apply)."""
    for coding in codings(header):
        coder = _coder(coding)
        if coder is None:
            return None
        body = coder[1](body)
    return body
