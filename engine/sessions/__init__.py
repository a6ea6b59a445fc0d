"""Session readers: agents' on-disk logs in, a live ``SessionState`` out."""
