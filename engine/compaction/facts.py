"""Facts a hand-off needs, read from the summarised items: requests, files, commands, errors,
tasks. Tool names differ between agents, so calls are classified by name and input keys."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from ctxtop.engine.compaction.items import Call, Item
from ctxtop.engine.words import plural

PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "absolute_path", "target_file")
COMMAND_KEYS = ("command", "cmd")
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_CHANGE_WORDS = ("write", "edit", "patch", "create", "replace", "insert", "delete")
_TASK_WORDS = ("todo", "task", "plan")
_READERS = {"cat", "sed", "head", "tail", "nl", "less", "bat", "more"}
_FILE_LIKE = re.compile(r"[\w./~-]*[\w-]\.[A-Za-z0-9]{1,8}|[\w.~-]*/[\w./-]+")
_ERROR_START = re.compile(r"^(Exit code [1-9]|Traceback|error|Error|ERROR|FAILED|fatal:)")
_EXIT_CODE = re.compile(r"^(?:Process exited with code|Exit code:?) ([1-9]\d*)", re.MULTILINE)
# Header lines Codex puts before a command's output.
_OUTPUT_HEADERS = re.compile(
    r"^(Chunk ID:|Wall time:|Process exited with code|Original token count:|Output:|Exit code:)"
)
_TASK_NUMBER = re.compile(r"#(\d+)")
LANGUAGES = {
    ".py": "Python",
    ".js": "JavaScript",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".c": "C",
    ".h": "C",
    ".cpp": "C++",
    ".rb": "Ruby",
    ".sh": "shell",
    ".md": "Markdown",
    ".json": "JSON",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".toml": "TOML",
    ".html": "HTML",
    ".css": "CSS",
    ".sql": "SQL",
}


def one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(slots=True)
class FileFact:
    path: str
    reads: int = 0
    changes: int = 0
    last: str = ""  # the last thing done to it, in words


@dataclass(slots=True)
class ErrorFact:
    call: Call
    message: str
    resolution: str = ""


@dataclass(slots=True)
class Facts:
    requests: list[str] = field(default_factory=list)
    files: dict[str, FileFact] = field(default_factory=dict)
    commands: list[Call] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    errors: list[ErrorFact] = field(default_factory=list)
    tasks: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (title, status)
    # The assistant's last words after each request: (request number, text).
    answers: list[tuple[int, str]] = field(default_factory=list)
    last_text: str = ""


def _value(call: Call) -> dict[str, Any]:
    return call.input if isinstance(call.input, dict) else {}


def command_of(call: Call) -> str | None:
    value = _value(call)
    for key in COMMAND_KEYS:
        command = value.get(key)
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        if isinstance(command, str):
            return command
    if call.name == "local_shell_call":
        return str(call.input)
    return None


def _is_task_tool(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _TASK_WORDS)


def changed_paths(call: Call) -> list[str]:
    """Files a call changes: an editing tool's path, or the files an ``apply_patch`` names."""
    text = call.input if isinstance(call.input, str) else ""
    value = _value(call)
    for key in ("input", "patch", *COMMAND_KEYS):
        if isinstance(value.get(key), str):
            text += "\n" + str(value[key])
    patched = [match.group(2).strip() for match in _PATCH_FILE.finditer(text)]
    if patched:
        return patched
    lowered = call.name.lower()
    if _is_task_tool(lowered) or not any(word in lowered for word in _CHANGE_WORDS):
        return []
    if value.get("command") == "view":  # str_replace_based_edit_tool's read mode
        return []
    return [str(value[key]) for key in PATH_KEYS if isinstance(value.get(key), str)][:1]


def read_paths(call: Call) -> list[str]:
    if changed_paths(call) or _is_task_tool(call.name):
        return []
    value = _value(call)
    found = [str(value[key]) for key in PATH_KEYS if isinstance(value.get(key), str)][:1]
    command = command_of(call)
    return found or (shell_reads(command) if command else [])


def shell_reads(command: str) -> list[str]:
    """Files a shell command prints (``cat``, ``sed -n``, ``head``, …): agents without a read
    tool (Codex) read files this way."""
    found: list[str] = []
    for part in re.split(r"&&|\|\||;|\|", command):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        if not words or words[0] not in _READERS:
            continue
        arguments = [word for word in words[1:] if not word.startswith("-")]
        if words[0] == "sed":  # its first argument is the script; -i edits in place
            if any(word.startswith("-i") for word in words[1:]):
                continue
            arguments = arguments[1:]
        for word in arguments:
            if not _FILE_LIKE.fullmatch(word) or word in found:
                continue
            found.append(word)
    return found


def error_line(call: Call) -> str | None:
    result = call.result or ""
    if call.is_error:
        return one_line(result or "(failed without output)")
    first = first_line(result)
    if _ERROR_START.match(first) or _EXIT_CODE.search(result[:2000]):
        return one_line(first if not _EXIT_CODE.match(first) else result)
    return None


def first_line(result: str) -> str:
    """The first line of a result that is output, not a header the agent added."""
    for line in result.splitlines():
        if line.strip() and not _OUTPUT_HEADERS.match(line.strip()):
            return line.strip()
    return ""


def _change_words(call: Call, path: str) -> str:
    value = _value(call)
    name = call.name
    if isinstance(value.get("content"), str):
        lines = value["content"].count("\n") + 1
        return f"written whole by {name} ({plural(lines, 'line')})"
    if isinstance(value.get("new_string"), str):
        return f"edited by {name}: now has {one_line(value['new_string'], 80)!r}"
    if isinstance(value.get("edits"), list):
        return f"edited by {name} ({len(value['edits'])} edits)"
    patched = [m for m in _PATCH_FILE.finditer(str(call.input)) if m.group(2).strip() == path]
    if patched:
        return f"{patched[-1].group(1).lower()}d by a patch"
    return f"changed by {name}"


def _track_tasks(facts: Facts, call: Call) -> None:
    value = _value(call)
    todos = value.get("todos", value.get("plan"))
    if isinstance(todos, list):  # a whole list each time (TodoWrite, update_plan)
        facts.tasks = {}
        for number, todo in enumerate(todos, 1):
            if isinstance(todo, dict):
                title = todo.get("content") or todo.get("step") or todo.get("subject") or ""
                facts.tasks[str(number)] = (one_line(str(title), 120), str(todo.get("status")))
        return
    if isinstance(value.get("subject"), str):  # TaskCreate: the id is in the result
        found = _TASK_NUMBER.search(call.result or "")
        task_id = found.group(1) if found else str(len(facts.tasks) + 1)
        facts.tasks[task_id] = (one_line(value["subject"], 120), "pending")
        return
    task_id = value.get("taskId", value.get("id"))
    if task_id is not None and isinstance(value.get("status"), str):
        title = facts.tasks.get(str(task_id), (f"task {task_id}", ""))[0]
        facts.tasks[str(task_id)] = (title, value["status"])


def gather(items: list[Item], last_request_open: bool = False) -> Facts:
    """``last_request_open``: the last request's turn goes on past these items (the cut fell
    inside it), so what the assistant said last is progress, not its answer."""
    facts = Facts()
    last_answer = ""
    for item in items:
        if item.kind == "request":
            if last_answer:
                facts.answers.append((len(facts.requests), last_answer))
            last_answer = ""
            facts.requests.append(item.text.strip())
        for name in item.files:
            fact = facts.files.setdefault(name, FileFact(name))
            fact.reads += 1
            fact.last = "attached to a message"
        if item.role == "assistant" and item.text.strip():
            facts.last_text = item.text.strip()
            if facts.requests:  # an answer belongs to a request (not to the lead-in)
                last_answer = facts.last_text
        for call in item.calls:
            facts.calls.append(call)
            if command_of(call) is not None:
                facts.commands.append(call)
            for path in changed_paths(call):
                fact = facts.files.setdefault(path, FileFact(path))
                fact.changes += 1
                fact.last = _change_words(call, path)
            for path in read_paths(call):
                fact = facts.files.setdefault(path, FileFact(path))
                fact.reads += 1
                if not fact.changes:
                    lines = (call.result or "").count("\n") + 1 if call.result else 0
                    fact.last = f"read ({plural(lines, 'line')})" if lines else "read"
            if _is_task_tool(call.name):
                _track_tasks(facts, call)
            message = error_line(call)
            if message is not None:
                facts.errors.append(ErrorFact(call, message))
    if last_answer and not last_request_open:
        facts.answers.append((len(facts.requests), last_answer))
    _resolve(facts, items)
    return facts


def _resolve(facts: Facts, items: list[Item]) -> None:
    """What came of each error: the same call succeeding later, or the assistant's next words."""
    order = {id(call): index for index, call in enumerate(facts.calls)}
    texts: list[tuple[int, str]] = []
    seen = 0
    for item in items:
        seen += len(item.calls)
        if item.role == "assistant" and item.text.strip():
            texts.append((seen, item.text.strip()))
    for error in facts.errors:
        at = order[id(error.call)]
        command = command_of(error.call)
        for later in facts.calls[at + 1 :]:
            same = later.name == error.call.name and (
                command_of(later) == command if command else later.input == error.call.input
            )
            if same and error_line(later) is None and later.result is not None:
                error.resolution = "the same call succeeded later"
                break
        if not error.resolution:
            following = next((text for index, text in texts if index > at), "")
            if following:
                error.resolution = f"next step: {one_line(following, 160)}"


def languages(facts: Facts) -> list[str]:
    found: list[str] = []
    for path in facts.files:
        name = LANGUAGES.get(PurePosixPath(path).suffix.lower())
        if name and name not in found:
            found.append(name)
    return found


def programs(facts: Facts) -> list[str]:
    """The programs the shell commands ran (first word of each command, after ``cd x &&``)."""
    found: list[str] = []
    for call in facts.commands:
        for part in re.split(r"&&|\|\||;|\|", command_of(call) or ""):
            words = [w for w in part.split() if "=" not in w.split("/")[0]]
            if not words or words[0] in ("cd", "echo", "export"):
                continue
            program = words[0].rsplit("/", 1)[-1]
            if program in ("python", "python3") and len(words) > 2 and words[1] == "-m":
                program = f"{program} -m {words[2]}"
            if program not in found:
                found.append(program)
    return found
