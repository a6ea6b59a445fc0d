"""Screens besides the main dashboard."""
