"""Context editing: policies that choose what to clear, previews, and forks the agent can resume."""
