"""The baseline backend's short answers over an OpenAI-compatible chat endpoint (the paper's prompt),
against a local fake of that API; the rules answer when it fails. No network, no weights."""

from __future__ import annotations

import json
import urllib.request

from devtools.assist_baseline.server import Config, suggest
from pipeline.release.short_answers.llm import LLMConfig
from tests.pipeline.assist.servers import baseline, openai_reply, scripted

BODY = {
    "contract": "screenqa-assist/1",
    "stage": "short-answers",
    "screen": {"rico_id": "1", "width": 10, "height": 10, "candidates": []},
    "question": {"id": 1, "text": "How many reviews does the app have?"},
    "answer": {"elements": ["3 reviews"], "full_answer": "The app has 3 reviews."},
}


def _config(url: str) -> Config:
    return Config(openai=LLMConfig(base_url=f"{url}/v1", api_key="k", model="local-model", timeout=2))


def test_short_answers_come_from_the_chat_endpoint_with_the_papers_prompt():
    with scripted(openai_reply('["3", "three", "3 reviews"]')) as (url, seen):
        reply = suggest(BODY, _config(url))
    assert reply["model_version"] == "openai:local-model"
    assert [item["text"] for item in reply["short_answers"]] == ["3", "three", "3 reviews"]
    (call,) = seen
    assert call["path"] == "/v1/chat/completions" and call["authorization"] == "Bearer k"
    assert call["body"]["model"] == "local-model" and call["body"]["temperature"] == 0
    prompt = call["body"]["messages"][0]["content"]
    assert prompt.startswith("List various ways to rephrase the answer.")
    assert "Question: 'How many reviews does the app have?'" in prompt


def test_the_rules_answer_when_the_chat_endpoint_fails_or_talks_nonsense():
    for reply in (lambda body: (500, {"error": "down"}), openai_reply("I cannot help with that.")):
        with scripted(reply) as (url, seen):
            answer = suggest(BODY, _config(url))
        assert seen and answer["model_version"] == "rules"
        assert "3" in [item["text"] for item in answer["short_answers"]]


def test_the_baseline_process_serves_the_chat_adapter_over_http():
    with scripted(openai_reply('["three"]')) as (chat_url, _seen), baseline(_config(chat_url)) as url:
        request = urllib.request.Request(
            f"{url}/suggest", data=json.dumps(BODY).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            reply = json.loads(response.read())
        with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
            health = json.loads(response.read())
    assert reply["short_answers"] == [{"text": "three", "score": 1.0}]
    assert health["status"] == "ok"
