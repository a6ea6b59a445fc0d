"""Tokenizer layer: offline BPE encodings, chat counting rules and caches."""

from ctxtop.engine.tokens.encoding import ENCODINGS, Encoding, char_estimate, get_encoding

__all__ = ["ENCODINGS", "Encoding", "char_estimate", "get_encoding"]
