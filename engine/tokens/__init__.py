"""Tokenizer layer: offline BPE encodings, chat counting rules, caches and calibration."""

from engine.tokens.encoding import ENCODINGS, Encoding, char_estimate, get_encoding

__all__ = ["ENCODINGS", "Encoding", "char_estimate", "get_encoding"]
