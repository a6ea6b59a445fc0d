"""Analysis of a session's context: sections by layout profile, cache, tools, forecast, accuracy.

``Analyzer.analyze`` (analyze.py) turns a session state into an immutable ``Analysis``
(snapshot.py) that the dashboard renders and ``ctxtop report --json`` prints under ``analysis``.
"""
