"""The fenced code blocks of the user docs (README.md and the pages under docs/) that the docs test executes.

A block is a fence whose info string names python, bash, shell, console or sh, or a fence without one
whose first line is a command (`sentforge ...`, `python ...`, `pip ...`, `$ ...`). The line just before the
fence may say `<!-- docs-test: skip (why) -->`: the block is collected but skipped, with that reason.
Every other fence (text, json, yaml, none) is output or a listing and is not executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

LANGUAGES = {"python": "python", "py": "python", "bash": "shell", "shell": "shell", "sh": "shell",
             "console": "shell"}
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
COMMAND = re.compile(r"^\s*(\$ |(sentforge|python|python3|pip|OMP_NUM_THREADS=\S+ python)\s)")
SKIP = re.compile(r"^\s*<!--\s*docs-test:\s*skip\s*(?:\((?P<reason>.*)\))?\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    path: Path  # the markdown file
    line: int  # 1-based line of the opening fence
    language: str  # "python" or "shell"
    code: str
    skip: str | None  # the reason, when the block is marked to skip

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"


def doc_files(repo: Path) -> list[Path]:
    """README.md and every page under docs/ (docs/results/ too), in path order: a new page is picked up without
    being listed."""
    return [repo / "README.md", *sorted((repo / "docs").rglob("*.md"))]


def blocks_of(path: Path) -> list[Block]:
    """The executable fenced blocks of one markdown file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence = len(match["indent"]), match["fence"]
        language = (match["info"].split() or [""])[0].lower()
        end = i + 1
        while end < len(lines) and not re.match(rf"^ *{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[end]):
            end += 1
        if not language and end > i + 1 and COMMAND.match(lines[i + 1]):
            language = "bash"  # an unlabelled fence of commands is a shell block all the same
        if language in LANGUAGES:
            body = [line[indent:] if line[:indent].strip() == "" else line for line in lines[i + 1:end]]
            skip = SKIP.match(lines[i - 1]) if i else None
            blocks.append(Block(path, i + 1, LANGUAGES[language], "\n".join(body) + "\n",
                                (skip["reason"] or "marked to skip") if skip else None))
        i = end + 1
    return blocks


def shell_commands(code: str) -> str:
    """A console block's commands: lines after a `$ ` prompt (with their continuations); other blocks as
    they are."""
    lines = code.splitlines()
    if not any(line.startswith("$ ") for line in lines):
        return code
    commands, continuing = [], False
    for line in lines:
        if line.startswith("$ ") or continuing:
            commands.append(line[2:] if line.startswith("$ ") else line)
            continuing = line.rstrip().endswith("\\")
    return "\n".join(commands) + "\n"
