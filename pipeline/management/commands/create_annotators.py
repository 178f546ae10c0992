"""python manage.py create_annotators --project SLUG --count N [--role annotator|lead] [--pool answers] [--json]

Bulk onboarding of a crowd: creates project accounts ``<project>/<prefix>-<n>`` (they work in this
project only) with fresh passwords and API tokens and prints them (the only time the passwords are
shown). Without ``--pool answers`` the new members
write and judge but do not answer (the answer pool is a selected group, as in the paper).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.exceptions import ApplicationError
from annotation.models import Project, Role
from annotation.services.members import members_create


class Command(BaseCommand):
    help = "Create project members in bulk and print their usernames, passwords and API tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--count", type=int, required=True, help="how many members")
        parser.add_argument("--role", choices=Role.values, default=Role.ANNOTATOR)
        parser.add_argument("--pool", choices=["answers"], help="put them in the answer pool")
        parser.add_argument("--prefix", help="usernames are <project>/<prefix>-<n> (default prefix: the role)")
        parser.add_argument("--json", action="store_true", help="print a JSON list")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project {options['project']!r}.", returncode=2)
        try:
            members = members_create(
                project=project,
                count=options["count"],
                role=options["role"],
                in_answer_pool=options["pool"] == "answers",
                prefix=options["prefix"],
            )
        except ApplicationError as exc:
            raise CommandError(f"--{exc.field}: {exc.message}" if exc.field else exc.message, returncode=2) from exc
        if options["json"]:
            self.stdout.write(json.dumps(members, indent=2))
            return
        for m in members:
            pool = " (answer pool)" if m["in_answer_pool"] else ""
            self.stdout.write(f"{m['username']}\t{m['password']}\t{m['token']}\t{m['role']}{pool}")
