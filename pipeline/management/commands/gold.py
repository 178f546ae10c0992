"""python manage.py gold <project-slug> list [--stage STAGE] [--json]
python manage.py gold <project-slug> promote <assignment-id> [--answer JSON]
python manage.py gold <project-slug> activate|deactivate <gold-id>

A lead's gold items from the command line (docs/quality.md): list them with how often each was
served and answered right (``most fail`` marks one that most annotators got wrong), promote a
submission to gold (its answer as submitted, or ``--answer`` edited), activate or deactivate one.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.exceptions import ApplicationError
from annotation.models import Project
from pipeline.quality.gold import gold_promote, gold_set_active
from pipeline.quality.report import gold_stats


class Command(BaseCommand):
    help = "List, promote, activate or deactivate a project's gold items."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("action", choices=["list", "promote", "activate", "deactivate"])
        parser.add_argument("id", nargs="?", type=int, help="promote: the assignment id; (de)activate: the gold id")
        parser.add_argument("--answer", help="promote: the answer as JSON (the stage's submit body)")
        parser.add_argument("--stage", help="list: only this stage")
        parser.add_argument("--json", action="store_true", help="list: print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project {options['project']!r}.", returncode=2)
        action = options["action"]
        try:
            if action == "list":
                self._list(project, stage=options["stage"], as_json=options["json"])
                return
            if options["id"] is None:
                raise CommandError(f"{action} needs an id.", returncode=2)
            if action == "promote":
                answer = _answer(options["answer"])
                gold = gold_promote(project=project, assignment_id=options["id"], user=None, answer=answer)
                self.stdout.write(f"gold item #{gold.pk} ({gold.stage}) from assignment #{options['id']}")
            else:
                gold = gold_set_active(project=project, gold_id=options["id"], active=action == "activate")
                self.stdout.write(f"gold item #{gold.pk} {'active' if gold.active else 'inactive'}")
        except ApplicationError as exc:
            raise CommandError(exc.message, returncode=2) from exc

    def _list(self, project: Project, *, stage: str | None, as_json: bool) -> None:
        rows = [
            {
                "id": s.gold.pk,
                "stage": s.gold.stage,
                "rico_id": s.gold.screen.rico_id,
                "question_id": s.gold.question_id,
                "active": s.gold.active,
                "served": s.served,
                "correct": s.correct,
                "suspect": s.suspect,
            }
            for s in gold_stats(project=project, stage=stage)
        ]
        if as_json:
            self.stdout.write(json.dumps(rows, sort_keys=True))
            return
        for r in rows:
            flags = ("" if r["active"] else " inactive") + (" most fail" if r["suspect"] else "")
            self.stdout.write(
                f"#{r['id']} {r['stage']} screen {r['rico_id']}: {r['correct']} of {r['served']} right{flags}"
            )


def _answer(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CommandError(f"--answer is not valid JSON: {exc.msg}.", returncode=2) from exc
    if not isinstance(value, dict):
        raise CommandError("--answer is a JSON object (the stage's submit body).", returncode=2)
    return value
