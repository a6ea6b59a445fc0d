"""The settings file and the user's theme, profile and model files are read bounded: a named
pipe is refused without waiting, a file over the size limit and aliases that expand past the
limit ("billion laughs") are one line naming the file and line, and a file of many unknown keys
is a few warnings. Children run with 1 GB of address space and a time-out, so that the old
unbounded behaviour ends in a failure instead of filling the machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import ROOT, SAMPLES, Ended, run_cli, run_subprocess

from ctxtop.engine.errors import InputError
from ctxtop.engine.yaml_text import MAX_ALIAS_NODES, load_yaml, read_yaml_file

MEMORY = 1 << 30


def alias_bomb(key: str = "profile") -> str:
    """Ten lines whose last alias stands for 9**10 (3.4 billion) strings."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join([*lines, f"{key}: *a9", ""])


def _one_line(ended: Ended, path: Path, line: int | None = None) -> None:
    assert ended.code == 2, ended
    assert len(ended.err.splitlines()) == 1 and "Traceback" not in ended.err, ended.err
    where = f"{path}:{line}: " if line else f"{path}: "
    assert ended.err.startswith(f"ctxtop: {where}"), ended.err


@pytest.mark.parametrize(
    "argv",
    [
        ("config",),
        ("report", str(SAMPLES["claude-code"])),
        ("compact", str(SAMPLES["claude-code"]), "--keep-rounds", "1", "--dry-run"),
    ],
)
def test_an_alias_bomb_in_the_settings_is_one_line(
    argv: tuple[str, ...], isolated_dirs: Path
) -> None:
    config = isolated_dirs / "config" / "config.yaml"
    config.parent.mkdir()
    config.write_text(alias_bomb())
    ended = run_subprocess(*argv, timeout=60, memory_limit=MEMORY)
    _one_line(ended, config, line=6)  # a5: nine aliases of a4 (9**5 strings) cross the limit
    assert f"aliases expand to over {MAX_ALIAS_NODES:,} values" in ended.err


def test_aliases_within_the_limit_load_and_a_recursive_one_is_refused() -> None:
    assert load_yaml("base: &b {editing: 0.5}\nthresholds: *b\nglob: '*.py'\n") == {
        "base": {"editing": 0.5},
        "thresholds": {"editing": 0.5},
        "glob": "*.py",
    }
    with pytest.raises(Exception, match="inside the node it names"):
        load_yaml("loop: &a [1, *a]\n")


def test_a_big_settings_file_is_refused_and_unknown_keys_are_a_few_lines(
    isolated_dirs: Path,
) -> None:
    config = isolated_dirs / "config" / "config.yaml"
    config.parent.mkdir()
    config.write_text("".join(f"key{i:07d}: value\n" for i in range(1_200_000)))  # 22 MB
    ended = run_subprocess("config", timeout=60, memory_limit=MEMORY)
    _one_line(ended, config)
    assert "too large for a settings file" in ended.err
    config.write_text("".join(f"key{i:05d}: value\n" for i in range(5_000)))
    ended = run_cli("config")
    assert ended.code == 0
    warnings = ended.err.splitlines()
    assert len(warnings) == 11, ended.err
    assert warnings[0] == f"ctxtop: {config}: unknown key 'key00000' ignored"
    assert warnings[-1] == f"ctxtop: {config}: and 4,990 more unknown keys ignored"


def test_a_name_that_is_not_text_is_refused(isolated_dirs: Path) -> None:
    config = isolated_dirs / "config" / "config.yaml"
    config.parent.mkdir()
    config.write_text("theme: [a, b]\n")
    ended = run_cli("config")
    _one_line(ended, config)
    assert "theme must be a name" in ended.err


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def test_named_pipes_and_bombs_among_the_users_files_are_refused(isolated_dirs: Path) -> None:
    """Themes, profiles and the model registry read through the same bounded reader: a pipe
    never makes start-up wait (a child with a time-out, as a hang would otherwise hang the
    tests)."""
    config = isolated_dirs / "config"
    fifo_theme = _fifo(config / "themes" / "pipe.yaml")
    (config / "themes" / "bomb.yaml").write_text(alias_bomb("name"))
    code = (
        "from ctxtop.themes.loader import all_themes\n"
        "themes, errors = all_themes()\n"
        "print(len(themes)); print('\\n'.join(errors))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    count, *errors = done.stdout.splitlines()
    assert count == "3"  # the bundled ones
    assert errors == [
        f"{config / 'themes' / 'bomb.yaml'}:6: invalid YAML "
        f"(aliases expand to over {MAX_ALIAS_NODES:,} values)",
        f"{fifo_theme}: cannot read (not a regular file)",
    ]
    pipe_profile = _fifo(config / "profiles" / "mine.yaml")
    ended = run_subprocess("report", str(SAMPLES["claude-code"]), "--profile", "mine", timeout=60)
    _one_line(ended, pipe_profile)
    assert "not a regular file" in ended.err
    with pytest.raises(InputError, match="not a regular file"):
        read_yaml_file(_fifo(config / "models.yaml"))
