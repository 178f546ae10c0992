"""Calling a suggestion backend: one POST with the project's URL, token and timeout, in the project's
protocol (``assist_protocol``): the product's own contract (``POST {url}/suggest``) or a Label Studio
ML backend's (``POST {url}/predict``, translated both ways by ``label_studio``).

Every failure (no answer in time, no connection, an HTTP error, a reply that is not JSON or breaks
the contract) is an ``AssistError`` with a one-line reason; nothing here retries (the next job does).
Called only from background work (``pipeline.assist.service``), never while a lease is taken.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import requests

from annotation.models import AssistProtocol

from .contract import ContractError, suggest_response
from .label_studio import predict_reply, predict_request

CONNECT_TIMEOUT = 2.0


class AssistError(Exception):
    """The backend gave no usable suggestion; ``str(error)`` says why."""


@dataclass(frozen=True)
class Backend:
    url: str
    token: str
    timeout: float
    protocol: str = AssistProtocol.SCREENQA

    @classmethod
    def of(cls, project: Any) -> Backend | None:
        """The project's backend, or ``None`` when it has none configured."""
        if not project.assist_url:
            return None
        url, token = project.assist_url.rstrip("/"), project.assist_token
        return cls(url=url, token=token, timeout=project.assist_timeout_seconds, protocol=project.assist_protocol)


@dataclass(frozen=True)
class Reply:
    result: dict[str, Any]
    latency_ms: int


def backend_call(*, backend: Backend, body: dict[str, Any], screen: dict[str, Any]) -> Reply:
    """POST ``body`` to ``{url}/suggest`` (or, to a Label Studio backend, its translation to
    ``{url}/predict``); the checked reply, or ``AssistError``."""
    headers = {"Accept": "application/json"}
    if backend.token:
        headers["Authorization"] = f"Bearer {backend.token}"
    label_studio = backend.protocol == AssistProtocol.LABEL_STUDIO
    started = time.monotonic()
    try:
        response = requests.post(
            f"{backend.url}/predict" if label_studio else f"{backend.url}/suggest",
            json=predict_request(body) if label_studio else body,
            headers=headers,
            timeout=(min(CONNECT_TIMEOUT, backend.timeout), backend.timeout),
            allow_redirects=False,
        )
    except requests.Timeout as exc:
        raise AssistError(f"no answer within {backend.timeout:g} s") from exc
    except requests.RequestException as exc:
        raise AssistError(f"cannot reach the backend: {type(exc).__name__}") from exc
    latency_ms = round((time.monotonic() - started) * 1000)
    if response.status_code != 200:
        raise AssistError(f"HTTP {response.status_code} from the backend")
    try:
        reply = response.json()
    except ValueError as exc:
        raise AssistError("the backend's reply is not JSON") from exc
    try:
        if label_studio:
            reply = predict_reply(reply, stage=body["stage"], screen=screen)
        result = suggest_response(reply, stage=body["stage"], screen=screen)
    except ContractError as exc:
        raise AssistError(f"the reply breaks the contract: {exc}") from exc
    return Reply(result=result, latency_ms=latency_ms)
