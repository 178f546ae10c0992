"""The LLM backend over real HTTP: a tiny OpenAI-compatible server on 127.0.0.1 in a thread.

The server is real (stdlib ``http.server``); only its replies are canned. Each test sets how the
server answers and checks what our code sent and what it made of the reply.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pipeline.release.short_answers import short_answers_generate
from pipeline.release.short_answers.llm import LLMError, parse_rephrases


@dataclass
class Behaviour:
    status: int = 200
    content: str = "['male']"
    raw_body: bytes | None = None
    delay: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


def make_handler(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            behaviour.requests.append({"path": self.path, "body": json.loads(self.rfile.read(length))})
            behaviour.headers.append(dict(self.headers))
            if behaviour.delay:
                time.sleep(behaviour.delay)
            if behaviour.raw_body is not None:
                body = behaviour.raw_body
            else:
                body = json.dumps(
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": behaviour.content}}],
                    }
                ).encode()
            try:
                self.send_response(behaviour.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    return Handler


@pytest.fixture
def llm_server(monkeypatch) -> Iterator[Behaviour]:
    behaviour = Behaviour()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(behaviour))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("SHORT_ANSWERS_LLM_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("SHORT_ANSWERS_LLM_API_KEY", "test-key")
    monkeypatch.setenv("SHORT_ANSWERS_LLM_MODEL", "tiny-model")
    monkeypatch.setenv("SHORT_ANSWERS_LLM_TIMEOUT", "2")
    monkeypatch.setenv("SHORT_ANSWERS_BACKEND", "llm")
    try:
        yield behaviour
    finally:
        server.shutdown()
        server.server_close()


INPUTS = {
    "question": "How many reviews does the recipe have?",
    "elements": ["27 reviews"],
    "full_answer": "The recipe has 27 reviews.",
}


def test_prompt_holds_the_few_shot_examples_and_the_inputs(llm_server):
    # given an endpoint that answers with a bracketed list
    llm_server.content = "['27', 'twenty-seven', '27 reviews']"
    # when the backend is chosen from the environment
    result = short_answers_generate(**INPUTS)
    # then the answers are the endpoint's, marked as such
    assert result.source == "llm"
    assert result.answers == ["27", "twenty-seven", "27 reviews"]
    # and one request went to {base}/chat/completions with the paper's prompt, examples and inputs
    (request,) = llm_server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "tiny-model"
    prompt = request["body"]["messages"][0]["content"]
    assert prompt.startswith("List various ways to rephrase the answer.")
    assert "without extra words from the question" in prompt
    assert "Question: 'What is the gender?'" in prompt
    assert "Rephrases: ['male']" in prompt
    assert "Answer elements: ['Jon', 'Brown']" in prompt
    assert "Rephrases: ['Jon Brown']" in prompt
    assert prompt.endswith(
        "Now is your turn.\n"
        "Question: 'How many reviews does the recipe have?'\n"
        "Answer elements: ['27 reviews']\n"
        "Full answer: 'The recipe has 27 reviews.'\n"
        "Rephrases:"
    )
    assert llm_server.headers[0]["Authorization"] == "Bearer test-key"


def test_reply_with_text_around_the_list_and_duplicates(llm_server):
    llm_server.content = 'Sure! Here you go:\n["27", "27", "27 reviews"]\nHope it helps.'
    result = short_answers_generate(**INPUTS)
    assert result.source == "llm"
    assert result.answers == ["27", "27 reviews"]


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ({"status": 500}, "HTTP 500"),
        ({"delay": 3.0}, "timeout"),
        ({"content": "I cannot help with that."}, "no [...] list"),
        ({"content": "[27, 28]"}, "not a list of strings"),
        ({"content": "['', '  ']"}, "empty"),
        ({"content": "[this is not python"}, "no [...] list"),
        ({"content": "['unterminated]"}, "unparsable"),
        ({"raw_body": b"<html>bad gateway</html>"}, "did not return JSON"),
        ({"raw_body": b'{"choices": []}'}, "no choices"),
    ],
)
def test_falls_back_to_the_rules_and_logs_why(llm_server, caplog, setup, reason):
    # given an endpoint that fails in one way
    for key, value in setup.items():
        setattr(llm_server, key, value)
    # when short answers are asked of the LLM backend
    with caplog.at_level(logging.WARNING, logger="pipeline.release.short_answers"):
        result = short_answers_generate(**INPUTS, backend="llm")
    # then the rules answer, and the log says why
    assert result.source == "rules"
    assert result.answers[0] == "27"
    assert "27 reviews" in result.answers
    assert any(reason in record.getMessage() for record in caplog.records), caplog.text


def test_unreachable_or_unconfigured_endpoint_falls_back(monkeypatch, caplog):
    monkeypatch.setenv("SHORT_ANSWERS_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # discard port: refused
    monkeypatch.setenv("SHORT_ANSWERS_LLM_TIMEOUT", "1")
    with caplog.at_level(logging.WARNING, logger="pipeline.release.short_answers"):
        assert short_answers_generate(**INPUTS, backend="llm").source == "rules"
    assert "cannot reach" in caplog.text
    monkeypatch.delenv("SHORT_ANSWERS_LLM_BASE_URL")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pipeline.release.short_answers"):
        assert short_answers_generate(**INPUTS, backend="llm").source == "rules"
    assert "SHORT_ANSWERS_LLM_BASE_URL is not set" in caplog.text


def test_not_answerable_never_calls_the_endpoint(llm_server):
    result = short_answers_generate(**INPUTS, not_answerable=True)
    assert result.answers == ["<no answer>"]
    assert llm_server.requests == []


def test_explicit_rules_backend_ignores_the_environment(llm_server):
    assert short_answers_generate(**INPUTS, backend="rules").source == "rules"
    assert llm_server.requests == []


def test_parse_rephrases_accepts_json_lists():
    assert parse_rephrases('Rephrases: ["a", "b"]') == ["a", "b"]
    with pytest.raises(LLMError):
        parse_rephrases("no list here")
