"""Prompt trees rendered to a token budget with the semantics of @vscode/prompt-tsx.

``render(tree, budget, tokenizer, mode)`` (renderer.py) fits a tree built with model.py or read by
loader.py; ``build_report`` (report.py) explains the result. docs/render.md has the details.
"""
