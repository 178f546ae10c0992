"""Hostile input, refused in one place before any view runs (issue 12 §6, §7).

PostgreSQL refuses NUL characters in text and JSON, UTF-8 cannot encode a lone surrogate,
and a deeply nested JSON document makes Python's parser (or whatever walks it next) recurse
until ``RecursionError``. Each of these was a 500. ``HostileInputMiddleware`` checks:

* the URL path and every query parameter (name and value) for NUL;
* every form field (POST, urlencoded or multipart; uploaded files are data, not text; a
  multipart body larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is a file upload, left to its view);
* a JSON body (``application/json`` or ``+json``): parsed once here, with nesting capped at
  ``JSON_MAX_DEPTH`` and every key and string checked for NUL and lone surrogates;

and answers 400 naming the offending field (the API's error shape, ``annotation.apis.errors``:
``{"detail", "field", "<field>": [detail]}``). Forms whose fields themselves hold JSON (the
answers stage's ``elements``) parse them with ``json_loads_checked``: the same rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.http.multipartparser import MultiPartParserError

from annotation.exceptions import ApplicationError

# Deep enough for every body the product takes (a draft with elements and boxes is 4 deep);
# shallow enough that nothing downstream comes near Python's recursion limit.
JSON_MAX_DEPTH = 32

_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")


class HostileInputError(ApplicationError):
    """Input that cannot be stored: a NUL, a lone surrogate, JSON nested too deeply."""


def _text_check(text: str, *, field: str) -> None:
    found = _BAD_CHAR.search(text)
    if found is None:
        return
    if found.group() == "\x00":
        raise HostileInputError(f"{field} contains a NUL character (\\u0000), which cannot be stored.", field=field)
    raise HostileInputError(f"{field} contains a lone UTF-16 surrogate, which is not valid text.", field=field)


def value_check(value: Any, *, field: str) -> None:
    """Refuse NUL and lone surrogates in every key and string of a parsed JSON value, and
    nesting deeper than ``JSON_MAX_DEPTH``. Iterative: a deep value cannot exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            _text_check(item, field=where)
        elif isinstance(item, dict | list):
            if depth >= JSON_MAX_DEPTH:
                raise HostileInputError(f"{where} is nested more than {JSON_MAX_DEPTH} levels deep.", field=where)
            if isinstance(item, dict):
                for key, inner in item.items():
                    name = f"{where}.{key}" if where else str(key)
                    _text_check(str(key), field=name)
                    stack.append((inner, name, depth + 1))
            else:
                stack.extend((inner, f"{where}[{n}]", depth + 1) for n, inner in enumerate(item))


def json_loads_checked(raw: str | bytes, *, field: str = "") -> Any:
    """``json.loads`` under the rules above. Unreadable JSON raises ``ValueError`` as
    ``json.loads`` does; hostile JSON raises ``HostileInputError`` naming the field."""
    try:
        value = json.loads(raw)
    except RecursionError as exc:
        raise HostileInputError(
            f"{field or 'The body'} is nested more than {JSON_MAX_DEPTH} levels deep.", field=field or "body"
        ) from exc
    value_check(value, field=field)
    return value


def _is_json(content_type: str) -> bool:
    main = content_type.split(";")[0].strip().lower()
    return main == "application/json" or main.endswith("+json")


def request_check(request: HttpRequest) -> None:
    """Raise ``HostileInputError`` for the first hostile part of ``request`` (see the module)."""
    if "\x00" in request.path_info:
        raise HostileInputError("The URL path contains a NUL character (%00).", field="path")
    for name, values in request.GET.lists():
        _text_check(name, field=f"query parameter {name!r}")
        for v in values:
            _text_check(v, field=name)
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    content_type = request.META.get("CONTENT_TYPE", "")
    if _is_json(content_type):
        if request.body.strip():
            try:
                json_loads_checked(request.body)
            except ValueError:  # unreadable JSON: the view's parser says so
                return
        return
    main = content_type.split(";")[0].strip().lower()
    if main not in ("application/x-www-form-urlencoded", "multipart/form-data"):
        return
    if main == "multipart/form-data" and _declared_length(request) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        # A file upload: its view refuses it on its declared size before the body is read
        # (``import_request_size_check``), which parsing it here would defeat; the import's
        # text fields (prefix, device size) are checked against their patterns there.
        return
    try:
        form = request.POST if request.method == "POST" else QueryDict(request.body, encoding=request.encoding)
    except MultiPartParserError:
        return  # a malformed multipart body: the view's parser refuses it
    for name, values in form.lists():
        _text_check(name, field=name)
        for v in values:
            _text_check(v, field=name)


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _error_response(request: HttpRequest, exc: HostileInputError) -> HttpResponse:
    wants_json = request.path_info.startswith("/api/") or _is_json(request.META.get("CONTENT_TYPE", ""))
    field = exc.field or "body"
    if wants_json or "json" in request.META.get("HTTP_ACCEPT", ""):
        return JsonResponse({"detail": exc.message, "field": field, field: [exc.message]}, status=400)
    return HttpResponse(f"Bad request: {exc.message}\n", status=400, content_type="text/plain; charset=utf-8")


class HostileInputMiddleware:
    """Answers 400 to hostile input before any view, form or serializer sees it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            request_check(request)
        except HostileInputError as exc:
            return _error_response(request, exc)
        return self.get_response(request)
