"""TaskSpec → chat messages (pure): the task body plus what the answer must look like."""

from __future__ import annotations

from typing import Literal

from benchrig.core.messages import Message
from benchrig.core.task import TaskSpec
from benchrig.suites import get_suite

Mode = Literal["chat", "agent"]

# Answer checks that read a marker line: the prompt says so, once, for every such task.
ANSWER_TAILS = {
    "final_answer": "End your reply with one last line of the form `Final answer: <answer>`.",
}


def render(task: TaskSpec, mode: Mode = "chat") -> tuple[Message, ...]:
    """The messages that put `task` to a model (mode chat) or to a coding agent (mode agent):
    its suite's system message and instructions around the body, or the marker line its
    check reads.

    The hidden tests are never part of the prompt.
    """
    suite = get_suite(task.suite)
    body = task.body
    instructions = suite.instructions.get(mode)
    if instructions is not None:
        body = f"{body}\n\n{instructions.replace('{file}', task.solution_file)}"
    elif task.check_type in ANSWER_TAILS:
        body = f"{body}\n\n{ANSWER_TAILS[task.check_type]}"
    messages: list[Message] = []
    if suite.system is not None and mode == "chat":
        messages.append({"role": "system", "content": suite.system})
    messages.append({"role": "user", "content": body})
    return tuple(messages)
