"""Tool calls on the embedded model (in process and behind `benchrig serve`): llama-cpp-python's
`chatml-function-calling` chat handler, with the changes a tool conversation needs.

The handler (llama-cpp-python 0.3.x) chooses between `message:` and `functions.<name>:` under
a grammar, then writes the arguments under a grammar made from the tool's JSON Schema. As
shipped it (1) renders no `tool` message, so a fixture result would never reach the model:
BenchRig passes each one as a user message `Result of functions.<name>: <json>`; and (2)
writes a plain answer under the grammar meant for the follow-up (`functions.<name>:` or the
end), so no answer could ever be text: BenchRig lifts that grammar for the answer only. It
renders its template with HTML autoescape (a quote reaches the model as `&#34;`): BenchRig
unescapes the rendered part. And it asks for unbounded lengths: every completion is capped
at the turn's token budget.
"""

from __future__ import annotations

import html
from typing import Any

TOOL_CHAT_FORMAT = "chatml-function-calling"
TOOL_FORMAT_NOTE = (f"{TOOL_CHAT_FORMAT} (llama-cpp-python; tool results passed as user "
                    "messages, plain answers unconstrained, prompt not HTML-escaped, every "
                    "completion capped)")
ANSWER_PREFIX = "message:\n"


def handler_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped conversation messages as the handler's template can render them."""
    rendered = []
    for message in messages:
        if message.get("role") == "tool":
            rendered.append({"role": "user", "content": f"Result of functions."
                             f"{message.get('name')}: {message.get('content', '')}"})
        else:
            content = message.get("content")
            rendered.append({**message, "content": content if isinstance(content, str)
                             else ""})
    return rendered


class Capped:
    """Stands in for the Llama given to the handler: each completion capped at `budget`
    tokens, the plain answer written without the follow-up grammar; counts what it made."""

    def __init__(self, llm: Any, budget: int) -> None:
        self._llm, self._budget = llm, budget
        self.prompt_tokens: int | None = None
        self.completion_tokens = 0
        self._rendered: str | None = None
        self._unescaped = ""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def _unescape(self, prompt: str) -> str:
        """The handler renders its template with HTML autoescape on: a quote in a message
        reaches the model as `&#34;`. Every prompt it sends starts with that rendering (the
        first one is nothing else): that part is unescaped, what the model wrote after it
        is left as written."""
        if self._rendered is None:
            self._rendered, self._unescaped = prompt, html.unescape(prompt)
        if prompt.startswith(self._rendered):
            return self._unescaped + prompt[len(self._rendered):]
        return prompt

    def create_completion(self, prompt: Any = None, **kwargs: Any) -> Any:
        limit = kwargs.get("max_tokens")
        kwargs["max_tokens"] = self._budget if limit is None else min(limit, self._budget)
        if isinstance(prompt, str):
            prompt = self._unescape(prompt)
            if prompt.endswith(ANSWER_PREFIX):
                kwargs["grammar"] = None  # the answer is text, not a function name
        completion = self._llm.create_completion(prompt=prompt, **kwargs)
        usage = completion.get("usage") if isinstance(completion, dict) else None
        if isinstance(usage, dict):
            if self.prompt_tokens is None:
                self.prompt_tokens = usage.get("prompt_tokens")
            self.completion_tokens += int(usage.get("completion_tokens") or 0)
        return completion

    def usage(self) -> dict[str, int | None]:
        """The reply's usage: the first completion's prompt, every completion's output."""
        return {"prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": (self.prompt_tokens or 0) + self.completion_tokens}


def tool_completion(llm: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                    temperature: float, budget: int, sampling: dict[str, Any]
                    ) -> dict[str, Any]:
    """One chat completion with `tools` (tool_choice auto), not streamed; its `usage` is the
    sum over the handler's completions."""
    from llama_cpp.llama_chat_format import chatml_function_calling

    capped = Capped(llm, budget)
    reply: dict[str, Any] = chatml_function_calling(
        llama=capped, messages=handler_messages(messages), tools=tools, tool_choice="auto",
        temperature=temperature, max_tokens=budget, stream=False, **sampling)
    reply["usage"] = capped.usage()
    return reply
