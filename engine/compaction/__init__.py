"""Compaction: summarise the older part of a session into a new session the agent resumes."""
