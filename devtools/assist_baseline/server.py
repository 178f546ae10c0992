"""The baseline backend's HTTP server (standard library only): the contract of
``pipeline.assist.contract``.

* ``GET /health`` -> ``{"status": "ok", "model_version"}``;
* ``POST /suggest`` -> the stage's suggestions; 401 without the right bearer token (when started with
  ``--token``), 400 for a body that is not the contract's.

Short answers use an OpenAI-compatible chat endpoint when one is configured (``--openai-url``, the
paper's prompt, ``pipeline.release.short_answers.llm``), and the rules when it is not or it fails.
"""

from __future__ import annotations

import hmac
import json
import logging
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pipeline.release.short_answers.llm import LLMConfig, LLMError, llm_short_answers
from pipeline.release.short_answers.rules import short_answers_from_rules

from .ranker import judgments, rank

MODEL_VERSION = "baseline-text-layout-1"
BODY_MAX = 5_000_000
TOP = 10

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Config:
    token: str = ""
    openai: LLMConfig | None = None


def suggest(body: dict[str, Any], config: Config) -> dict[str, Any]:
    """The reply to one request body (``ValueError`` for a body that is not the contract's)."""
    stage = body.get("stage")
    screen = body.get("screen")
    if not isinstance(screen, dict) or not isinstance(screen.get("candidates"), list):
        raise ValueError("screen.candidates is required")
    if stage == "answers":
        question = (body.get("question") or {}).get("text") or ""
        ranked = rank(
            question=question,
            candidates=screen["candidates"],
            width=int(screen.get("width") or 1),
            height=int(screen.get("height") or 1),
        )
        return {
            "model_version": MODEL_VERSION,
            "elements": [{"vh_index": i, "score": round(s, 4)} for i, s in ranked[:TOP]],
        }
    if stage == "prefilter":
        return {"model_version": MODEL_VERSION, "judgments": judgments(candidates=screen["candidates"])}
    if stage == "short-answers":
        return _short_answers(body, config)
    raise ValueError(f"unknown stage {stage!r}")


def _short_answers(body: dict[str, Any], config: Config) -> dict[str, Any]:
    question = (body.get("question") or {}).get("text") or ""
    answer = body.get("answer") or {}
    elements = [e for e in answer.get("elements") or [] if isinstance(e, str) and e.strip()]
    full_answer = answer.get("full_answer") or ""
    if config.openai is not None and elements:
        try:
            texts = llm_short_answers(
                question=question, elements=elements, full_answer=full_answer, config=config.openai
            )
            version = f"openai:{config.openai.model}"
            return {"model_version": version, "short_answers": [{"text": t, "score": 1.0} for t in texts]}
        except LLMError as exc:
            logger.warning("short answers: the chat endpoint failed (%s); the rules answer", exc)
    texts = short_answers_from_rules(
        question=question, elements=elements, full_answer=full_answer, not_answerable=not elements
    )
    return {"model_version": "rules", "short_answers": [{"text": t, "score": 1.0} for t in texts]}


def make_handler(config: Config) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "assist-baseline/1"

        def log_message(self, format: str, *args: Any) -> None:
            logger.info("%s " + format, self.address_string(), *args)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/health":
                self._send(200, {"status": "ok", "model_version": MODEL_VERSION})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/suggest":
                self._send(404, {"error": "not found"})
                return
            if config.token:
                given = self.headers.get("Authorization", "")
                if not hmac.compare_digest(given.encode(), f"Bearer {config.token}".encode()):
                    self._send(401, {"error": "a bearer token is required"})
                    return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 < length <= BODY_MAX:
                    raise ValueError("a JSON body of at most 5 MB is required")
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict):
                    raise ValueError("the body must be a JSON object")
                reply = suggest(body, config)
            except (ValueError, TypeError, KeyError) as exc:
                self._send(400, {"error": str(exc)})
                return
            self._send(200, reply)

    return Handler


def make_server(host: str, port: int, config: Config) -> ThreadingHTTPServer:
    return ThreadingHTTPServer((host, port), make_handler(config))
