"""Qwen Code (@qwen-code/qwen-code): its JSONL chat recordings."""
