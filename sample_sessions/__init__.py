"""Small session logs in every supported format, for the demo and tests."""
