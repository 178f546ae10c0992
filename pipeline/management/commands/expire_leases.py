"""python manage.py expire_leases [--project SLUG]

Marks every lease whose time ran out as expired (a gold item left to expire counts as wrong for its
annotator: docs/quality.md). Optional: ``next`` reclaims run-out leases
lazily, unit by unit; this tidies the whole table (e.g. before reading lease statistics).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from pipeline.engine import assignment_expire_leases


class Command(BaseCommand):
    help = "Mark run-out leases as expired (next does this lazily anyway)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", help="project slug (default: all projects)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = None
        if options["project"]:
            project = Project.objects.filter(slug=options["project"]).first()
            if project is None:
                raise CommandError(f"No project {options['project']!r}.", returncode=2)
        count = assignment_expire_leases(project=project)
        self.stdout.write(f"{count} lease(s) expired")
