"""python manage.py short_answers [FILE] [--backend rules|llm]

Prints the short answers of each input as one JSON line ``{"answers": [...], "source": "rules"|"llm"}``.
Input (FILE, or stdin when FILE is omitted or ``-``): a JSON list of
``{"question": str, "elements": [str, ...], "full_answer": str, "not_answerable"?: bool}``.
Handy for leads checking the rules on real cases and for checking an LLM endpoint's configuration.
Malformed input: one line on stderr, exit code 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pipeline.release.short_answers import BACKENDS, short_answers_generate


def _parse(text: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"input is not valid JSON: {exc}", returncode=2) from exc
    if not isinstance(data, list):
        raise CommandError("input must be a JSON list of objects", returncode=2)
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise CommandError(f"item {i}: must be an object", returncode=2)
        if not isinstance(item.get("question"), str) or not isinstance(item.get("full_answer", ""), str):
            raise CommandError(f"item {i}: 'question' and 'full_answer' must be strings", returncode=2)
        elements = item.get("elements")
        if not isinstance(elements, list) or not all(isinstance(e, str) for e in elements):
            raise CommandError(f"item {i}: 'elements' must be a list of strings", returncode=2)
        if not isinstance(item.get("not_answerable", False), bool):
            raise CommandError(f"item {i}: 'not_answerable' must be true or false", returncode=2)
    return data


class Command(BaseCommand):
    help = "Print the acceptable short answers for a JSON list of (question, elements, full answer)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", nargs="?", default="-", help="JSON input file (default: stdin)")
        parser.add_argument("--backend", choices=BACKENDS, default=None, help="default: SHORT_ANSWERS_BACKEND")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}", returncode=2) from exc
        for item in _parse(text):
            result = short_answers_generate(
                question=item["question"],
                elements=item["elements"],
                full_answer=item.get("full_answer", ""),
                not_answerable=item.get("not_answerable", False),
                backend=options["backend"],
            )
            self.stdout.write(json.dumps({"answers": result.answers, "source": result.source}, ensure_ascii=False))
