"""python manage.py import_release DIR --project SLUG [--skip-invalid] [--gold [--gold-limit N]]"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.exceptions import ApplicationError
from annotation.models import Project
from pipeline.quality.gold import gold_from_release
from pipeline.release.imports import release_import


class Command(BaseCommand):
    help = (
        "Load ScreenQA release files (answers_and_bboxes/<split>.json, short_answers/<split>.json) "
        "into a project whose screens are imported. Idempotent."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path, help="folder holding answers_and_bboxes/ and/or short_answers/")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument(
            "--skip-invalid", action="store_true", help="skip malformed entries (reported) instead of refusing all"
        )
        parser.add_argument(
            "--gold",
            action="store_true",
            help="also make answers gold items from the release's answers (docs/quality.md); idempotent",
        )
        parser.add_argument("--gold-limit", type=int, default=None, help="at most this many new gold items")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with slug {options['project']!r}.")
        try:
            summary = release_import(
                project=project, directory=options["directory"], skip_invalid=options["skip_invalid"]
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        if options["gold"]:
            if options["gold_limit"] is not None and options["gold_limit"] < 0:
                raise CommandError("--gold-limit is a number >= 0.")
            summary["gold"] = gold_from_release(project=project, user=None, limit=options["gold_limit"])
        self.stdout.write(json.dumps(summary, indent=2))
        if summary["unknown_image_ids"]:
            self.stderr.write(
                f"Skipped {summary['total'].get('unknown_screen', 0)} entries on {summary['unknown_image_ids']} "
                "image_ids that are not screens of this project (import those screens first)."
            )
