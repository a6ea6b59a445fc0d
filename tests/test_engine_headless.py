"""The engine is a headless library: importing any of it never imports Textual."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ctxtop.engine as engine

PROBE = """
import importlib, json, pkgutil, sys
import ctxtop.engine as engine
names = sorted(m.name for m in pkgutil.walk_packages(engine.__path__, "ctxtop.engine."))
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "ui": sorted(m for m in sys.modules
      if m.split(".")[0] == "textual" or m.startswith(("ctxtop.tui", "tui")))}))
"""


def test_importing_every_engine_module_never_imports_textual() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    result = json.loads(out)
    on_disk = {
        "ctxtop.engine."
        + ".".join(p.relative_to(Path(engine.__file__).parent).with_suffix("").parts)
        for p in Path(engine.__file__).parent.rglob("*.py")
        if p.name != "__init__.py"
    }
    # The probe really walked the package: every module file on disk was imported.
    assert on_disk <= set(result["modules"])
    assert result["ui"] == []
