"""The live session model behind the dashboard: headless, testable without a terminal.

- ``LiveSession(path)``: reads a session file incrementally and turns each change into a
  ``LiveView``, the immutable figures every dashboard widget shows (nothing is computed in the UI);
- ``DemoReplay``: appends a bundled sample session to a file line by line, then starts over;
- ``find_session``: which file ``ctxtop`` with no argument follows, and where it looked.
"""
