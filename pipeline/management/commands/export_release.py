"""python manage.py export_release --project SLUG --out DIR [--format screenqa|docvqa|jsonl|imagefolder]"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.exceptions import ApplicationError
from annotation.models import Project
from pipeline.release.export.service import FORMATS, release_export, release_question_count


class Command(BaseCommand):
    help = "Write a project's kept questions and answers as a release (ScreenQA public format by default)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--out", required=True, type=Path, help="output folder (created if missing)")
        parser.add_argument("--format", default="screenqa", choices=FORMATS)

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with slug {options['project']!r}.")
        total = release_question_count(project=project)

        def progress(done: int) -> None:
            if options["verbosity"] >= 1:
                self.stderr.write(f"{done} / {total} questions written", ending="\r" if done < total else "\n")

        try:
            manifest = release_export(project=project, out_dir=options["out"], fmt=options["format"], progress=progress)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        counts = manifest["counts"]
        self.stdout.write(json.dumps({"out": str(options["out"]), "counts": counts}, indent=2))
