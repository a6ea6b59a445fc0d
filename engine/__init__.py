"""ctxtop's headless engine: session readers, tokenizers, the prompt renderer and analysis.

Nothing in this package imports Textual; ``tests/test_engine_headless.py`` proves it.
"""

__version__ = "0.1.0"
