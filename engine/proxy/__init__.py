"""Live mode's loopback proxy: agents' model requests pass through ctxtop on 127.0.0.1 on their
way to the provider, so ctxtop measures each request's exact composition (and, with a rewriter
registered, can change what the model receives).

- ``server``: ``ProxyServer`` (aiohttp), loopback clients only, one upstream per protocol;
  ``connections``: its client connections' timeouts and cap; ``loopback``: which addresses are;
- ``forward``: one request forwarded, streamed back as it arrives;
- ``rewrite``: the hook a rewriter registers on (``(protocol, session_id, body) -> bytes|None``);
- ``routes``, ``session_id``, ``settings``, ``shapes``: which API a request is, whose session,
  where it goes, and the provider-shaped error bodies;
- ``composition``, ``usage``, ``store``: the figures of each request and its response, appended
  to a per-session JSONL in the data dir (figures and hashes, never message text).
"""
