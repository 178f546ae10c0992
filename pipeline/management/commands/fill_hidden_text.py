"""python manage.py fill_hidden_text [--project SLUG]

Screens imported before the hidden-child rule (``annotation.vh.hidden_text``) keep candidates
without text whose hidden children hold it; this gives them that text, as an import now does.
Idempotent.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from annotation.services.screens import candidates_hidden_text_fill


class Command(BaseCommand):
    help = "Fill the text of candidates whose hidden children hold it (screens imported before the rule)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", help="project slug (default: all projects)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = None
        if options["project"]:
            project = Project.objects.filter(slug=options["project"]).first()
            if project is None:
                raise CommandError(f"No project {options['project']!r}.", returncode=2)
        count = candidates_hidden_text_fill(project=project)
        self.stdout.write(f"{count} candidate(s) filled")
