"""Optional LLM backend: the paper's few-shot prompt (v2 notes, appendix A.6) over any
OpenAI-compatible endpoint (``POST {base}/chat/completions``).

Configuration (read at call time, so a test or a worker can change it without a restart):

- ``SHORT_ANSWERS_LLM_BASE_URL``  e.g. ``http://127.0.0.1:8080/v1`` (required for this backend)
- ``SHORT_ANSWERS_LLM_API_KEY``   sent as ``Authorization: Bearer ...`` when set
- ``SHORT_ANSWERS_LLM_MODEL``     the ``model`` field (default ``gpt-4o-mini``)
- ``SHORT_ANSWERS_LLM_TIMEOUT``   seconds for the whole request (default 20)

``llm_short_answers`` raises ``LLMError`` for every failure (not configured, timeout, connection or
HTTP error, unparsable reply, empty list); the caller falls back to the rules and logs the reason.
"""

from __future__ import annotations

import ast
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

# The template of appendix A.6, word for word.
PROMPT_TEMPLATE = """List various ways to rephrase the answer.
The answer should be as short as possible, without extra words from the question.
Use all provided elements in each answer.
Provide the output in square brackets.

{examples}

Now is your turn.
Question: {question}
Answer elements: {elements}
Full answer: {full_answer}
Rephrases:"""

# The two examples of appendix A.6 (single and multiple elements), then two of ours that show the
# variants the release contains (digits/words with an optional unit, date formats).
FEW_SHOT_EXAMPLES: list[tuple[str, list[str], str, list[str]]] = [
    ("What is the gender?", ["Male"], "The gender is male.", ["male"]),
    ("What is the name?", ["Jon", "Brown"], "The name is Jon Brown.", ["Jon Brown"]),
    (
        "How many reviews does the app have?",
        ["3 reviews"],
        "The app has 3 reviews.",
        ["3", "three", "3 reviews", "three reviews"],
    ),
    (
        "What is the departure date?",
        ["May 5, 2017"],
        "The departure date is May 5, 2017.",
        ["May 5, 2017", "5 May 2017", "2017-05-05", "May 5th, 2017"],
    ),
]

_BRACKETS = re.compile(r"\[.*\]", re.DOTALL)


class LLMError(Exception):
    """The LLM backend could not produce short answers; the message says why."""


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    api_key: str
    model: str
    timeout: float

    @classmethod
    def from_environment(cls) -> LLMConfig:
        base_url = os.environ.get("SHORT_ANSWERS_LLM_BASE_URL", "").strip()
        if not base_url:
            raise LLMError("SHORT_ANSWERS_LLM_BASE_URL is not set")
        try:
            timeout = float(os.environ.get("SHORT_ANSWERS_LLM_TIMEOUT", "20"))
        except ValueError as exc:
            raise LLMError(f"SHORT_ANSWERS_LLM_TIMEOUT is not a number: {exc}") from exc
        return cls(
            base_url=base_url.rstrip("/"),
            api_key=os.environ.get("SHORT_ANSWERS_LLM_API_KEY", ""),
            model=os.environ.get("SHORT_ANSWERS_LLM_MODEL", "gpt-4o-mini"),
            timeout=timeout,
        )


def _example_block(question: str, elements: Sequence[str], full_answer: str, answers: Sequence[str]) -> str:
    return (
        "Here is another example:\n"
        f"Question: {question!r}\n"
        f"Answer elements: {list(elements)!r}\n"
        f"Full answer: {full_answer!r}\n"
        f"Rephrases: {list(answers)!r}"
    )


def build_prompt(*, question: str, elements: Sequence[str], full_answer: str) -> str:
    """The A.6 prompt with the few-shot examples and this question's inputs filled in."""
    examples = "\n\n".join(_example_block(*example) for example in FEW_SHOT_EXAMPLES)
    return PROMPT_TEMPLATE.format(
        examples=examples,
        question=repr(question),
        elements=repr(list(elements)),
        full_answer=repr(full_answer),
    )


def parse_rephrases(content: str) -> list[str]:
    """The list of strings in square brackets of a model reply; ``LLMError`` if there is none."""
    match = _BRACKETS.search(content)
    if match is None:
        raise LLMError(f"no [...] list in the reply: {content[:200]!r}")
    text = match.group(0)
    value: object
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LLMError(f"unparsable list in the reply: {text[:200]!r}") from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LLMError(f"the reply's list is not a list of strings: {text[:200]!r}")
    answers = [v.strip() for v in value if v.strip()]
    if not answers:
        raise LLMError("the reply's list is empty")
    return answers


def llm_short_answers(
    *, question: str, elements: Sequence[str], full_answer: str, config: LLMConfig | None = None
) -> list[str]:
    """Ask the configured endpoint for rephrases (one request, no retry: the rules are the fallback)."""
    config = config or LLMConfig.from_environment()
    body = {
        "model": config.model,
        "temperature": 0,
        "messages": [
            {"role": "user", "content": build_prompt(question=question, elements=elements, full_answer=full_answer)}
        ],
    }
    headers = {"Content-Type": "application/json"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    request = urllib.request.Request(  # noqa: S310 - the URL is operator configuration, http(s) only
        f"{config.base_url}/chat/completions", data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    if not request.full_url.startswith(("http://", "https://")):
        raise LLMError(f"unsupported URL scheme: {config.base_url}")
    try:
        with urllib.request.urlopen(request, timeout=config.timeout) as response:  # noqa: S310
            payload = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        raise LLMError(f"HTTP {exc.code} from {config.base_url}") from exc
    except TimeoutError as exc:
        raise LLMError(f"timeout after {config.timeout}s") from exc
    except urllib.error.URLError as exc:
        raise LLMError(f"cannot reach {config.base_url}: {exc.reason}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LLMError(f"the endpoint did not return JSON: {exc}") from exc
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMError("no choices[0].message.content in the reply") from exc
    if not isinstance(content, str):
        raise LLMError("choices[0].message.content is not text")
    return parse_rephrases(content)
