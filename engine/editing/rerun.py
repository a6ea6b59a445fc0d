"""Whether a tool call can safely be made again to see its cleared result.

Only reads, searches and listings can: a placeholder that tells the model to call Task, Write,
TodoWrite or a shell command again would have it repeat what the call did (start an agent,
write a file, run a build). A tool counts as a read when a word of its name is a reading verb
and none is a writing one (``Read``, ``WebSearch``, ``read_many_files``, ``list_directory``; not
``TodoWrite``, ``search_and_replace``). A shell command counts as a read only when every part of
it is a program known to only read (``ls``, ``cat``, ``grep``, ``git log`` ...), with no
redirection, substitution or background job.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

_READ_WORDS = frozenset(
    ["read", "view", "cat", "glob", "grep", "ls", "list", "search", "find", "fetch"]
)
_WRITE_WORDS = frozenset(
    [
        "write",
        "edit",
        "create",
        "replace",
        "delete",
        "remove",
        "update",
        "set",
        "save",
        "move",
        "rename",
        "patch",
        "apply",
        "run",
        "exec",
        "execute",
        "kill",
        "todo",
        "task",
        "agent",
    ]
)
_SHELL_TOOL = re.compile(r"bash|shell|exec|terminal|command|powershell", re.IGNORECASE)
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

# Programs that only read, the options that would make one write (or never end), and git's
# reading sub-commands.
_READ_PROGRAMS = frozenset(
    [
        "cat",
        "head",
        "tail",
        "ls",
        "pwd",
        "echo",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "wc",
        "find",
        "stat",
        "du",
        "df",
        "tree",
        "which",
        "type",
        "diff",
        "cut",
        "tr",
        "nl",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "whoami",
        "uname",
        "cd",
        "git",
    ]
)
_REFUSED_OPTIONS = {
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf"),
    "tail": ("-f", "-F", "--follow"),
    "rg": ("--pre",),
    "tree": ("-o",),
    "git": ("--output",),
}
_GIT_READS = frozenset(
    ["status", "log", "diff", "show", "ls-files", "rev-parse", "blame", "grep", "shortlog"]
)
_SEPARATORS = re.compile(r"\|\||&&|\||;")
_NOT_PROVABLE = re.compile(r"[<>`&\n]|\$\(")  # redirection, substitution, a background job


def name_words(tool: str) -> list[str]:
    """``WebSearch`` -> web, search; ``read_many_files`` -> read, many, files."""
    return [word.lower() for word in _WORD.findall(tool)]


def shell_command(tool_input: Any) -> str | None:
    """The shell command a call runs (``command``/``cmd``; Codex's ``["bash", "-lc", ...]``)."""
    if not isinstance(tool_input, dict):
        return None
    for key in ("command", "cmd"):
        value = tool_input.get(key)
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            if len(value) == 3 and value[1] in ("-c", "-lc") and value[0].endswith("sh"):
                return str(value[2])
            return shlex.join(value)
        if isinstance(value, str):
            return value
    return None


def _part_reads_only(part: str) -> bool:
    try:
        words = shlex.split(part)
    except ValueError:
        return False
    if not words or words[0] not in _READ_PROGRAMS:
        return False
    program, options = words[0], words[1:]
    if program == "git" and (not options or options[0] not in _GIT_READS):
        return False
    refused = _REFUSED_OPTIONS.get(program, ())
    return not any(word.split("=")[0] in refused for word in options)


def command_reads_only(command: str) -> bool:
    """Whether every part of the shell ``command`` is a program that only reads."""
    if _NOT_PROVABLE.search(command.replace("&&", "")):
        return False
    return all(_part_reads_only(part) for part in _SEPARATORS.split(command))


def safe_to_rerun(tool: str, tool_input: Any) -> bool:
    """Whether calling ``tool`` again with ``tool_input`` only reads (nothing changes)."""
    words = name_words(tool)
    if isinstance(tool_input, dict) and tool_input.get("command") == "view" and "edit" in words:
        return True  # str_replace_based_edit_tool's view command
    if _SHELL_TOOL.search(tool):
        command = shell_command(tool_input)
        return command is not None and command_reads_only(command)
    return bool(_READ_WORDS.intersection(words)) and not _WRITE_WORDS.intersection(words)
