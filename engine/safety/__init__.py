"""Safety checks on what ctxtop sends and writes (secret masking)."""
