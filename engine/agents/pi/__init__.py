"""Pi (@mariozechner/pi-coding-agent): its JSONL session trees."""
