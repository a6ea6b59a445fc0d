"""ctxtop's command line: each sub-command lives in its own module with ``register(subparsers)``."""
