"""The engine's packages form layers: each imports only packages below it, so there is no
package cycle and no upward arrow (the import statements of every module, read from the source,
lazy imports inside functions included)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Bottom to top. A package may import any package of a lower rank (and itself), none above.
LAYERS = {
    "ctxtop.engine.errors": 0,
    "ctxtop.engine.files": 0,
    "ctxtop.engine.paths": 0,
    "ctxtop.engine.yaml_text": 0,
    "ctxtop.engine.words": 0,
    "ctxtop.engine.safety": 1,
    "ctxtop.engine.tokens": 1,
    "ctxtop.engine.models": 1,
    "ctxtop.engine.config": 2,
    "ctxtop.engine.sessions": 2,
    "ctxtop.engine.render": 2,
    "ctxtop.engine.editing": 3,
    "ctxtop.engine.compaction": 3,
    "ctxtop.engine.analysis": 4,
    "ctxtop.engine.agents": 5,
    "ctxtop.engine.forks": 6,
    "ctxtop.engine.proxy": 6,
    "ctxtop.engine.statusline": 7,
    "ctxtop.engine.live": 7,
    "ctxtop.engine.cli": 8,
    "ctxtop.tui": 9,
}


def package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[1] == "tui" else ".".join(parts[:3])


def imports() -> dict[str, set[tuple[str, str]]]:
    """package -> {(imported package, importing module)} for every first-party import."""
    found: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for top in ("engine", "tui"):
        for path in (ROOT / top).rglob("*.py"):
            module = ".".join(("ctxtop", *path.relative_to(ROOT).with_suffix("").parts))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                for name in names:
                    if name.startswith(("ctxtop.engine.", "ctxtop.tui")):
                        found[package_of(module)].add((package_of(name), module))
    return found


def test_every_package_has_a_layer() -> None:
    packages = {
        package_of(".".join(("ctxtop", *p.relative_to(ROOT).with_suffix("").parts)))
        for top in ("engine", "tui")
        for p in (ROOT / top).rglob("*.py")
    }
    packages.discard("ctxtop.engine.__init__")
    assert packages <= set(LAYERS), packages - set(LAYERS)


def test_no_package_imports_one_above_it() -> None:
    upward = sorted(
        f"{module} imports {target}"
        for package, targets in imports().items()
        for target, module in targets
        if target in LAYERS and LAYERS[target] > LAYERS[package]
    )
    assert upward == []


def test_no_package_cycle() -> None:
    graph = {p: {t for t, _ in targets if t != p} for p, targets in imports().items()}
    cycles = sorted(f"{a} <-> {b}" for a in graph for b in graph[a] if a in graph.get(b, ()))
    assert cycles == []
