"""TaskSpec → chat messages (pure): the task body plus what the answer must look like."""

from __future__ import annotations

from typing import Literal

from benchrig.core.messages import Message
from benchrig.core.task import TaskSpec

Mode = Literal["chat", "agent"]

CODING_CHAT = (
    "Reply with the complete solution as one Python module in a single ```python code "
    "block. Do not include tests or example usage."
)
CODING_AGENT = (
    "Write the complete solution to the file `{file}` in the current directory. It must be "
    "importable as a module. Do not write tests; do not ask questions."
)
# Answer checks that read a marker line: the prompt says so, once, for every such task.
ANSWER_TAILS = {
    "final_answer": "End your reply with one last line of the form `Final answer: <answer>`.",
}
SYSTEM = {
    "coding": "You are an expert Python programmer.",
    # Some chat handlers show the tools only inside a system message (llama-cpp-python's
    # chatml-function-calling): every runtime gets the same one.
    "tool_use": "You are a helpful assistant with access to tools. Call a tool only when it "
                "serves the request; otherwise answer directly in plain text.",
}


def render(task: TaskSpec, mode: Mode = "chat") -> tuple[Message, ...]:
    """The messages that put `task` to a model (mode chat) or to a coding agent (mode agent).

    The hidden tests are never part of the prompt.
    """
    body = task.body
    if task.suite == "coding":
        tail = CODING_AGENT.format(file=task.solution_file) if mode == "agent" else CODING_CHAT
        body = f"{body}\n\n{tail}"
    elif task.check_type in ANSWER_TAILS:
        body = f"{body}\n\n{ANSWER_TAILS[task.check_type]}"
    messages: list[Message] = []
    if task.suite in SYSTEM and mode == "chat":
        messages.append({"role": "system", "content": SYSTEM[task.suite]})
    messages.append({"role": "user", "content": body})
    return tuple(messages)
