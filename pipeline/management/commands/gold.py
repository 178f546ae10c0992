"""python manage.py gold {list,create,promote,deactivate,activate} --project SLUG ...

A lead's gold items from the command line (docs/quality.md), over ``pipeline.quality.gold``:

* ``list [--stage S] [--json]``: every gold item with how annotators fared on it;
* ``create FILE``: gold items from a JSON file, a list of ``{"stage", "rico_id", "question"
  (answers: the question's text on that screen), "answer" (a submit body of the stage),
  "note"}``; all or nothing;
* ``promote ASSIGNMENT_ID [--answer FILE]``: an accepted submission becomes gold (as submitted,
  or with the answer in FILE);
* ``deactivate ID`` / ``activate ID``: stop (or resume) serving a gold item.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotation.exceptions import ApplicationError
from annotation.models import Project
from pipeline.quality.gold import gold_items_with_results, gold_promote, gold_set_active, gold_unit_create


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError(f"{path}: not a readable JSON file ({exc}).") from exc


class Command(BaseCommand):
    help = "List, create, promote, deactivate or activate gold (control) items of a project."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("list", help="gold items with how annotators fared on each")
        listing.add_argument("--stage", help="only this stage")
        listing.add_argument("--json", action="store_true")
        create = sub.add_parser("create", help="gold items from a JSON file (all or nothing)")
        create.add_argument("file", type=Path)
        promote = sub.add_parser("promote", help="make an accepted submission gold")
        promote.add_argument("assignment_id", type=int)
        promote.add_argument("--answer", type=Path, help="JSON file: the edited answer (a submit body)")
        for name in ("deactivate", "activate"):
            one = sub.add_parser(name, help=f"{name} a gold item")
            one.add_argument("gold_id", type=int)
        for action in sub.choices.values():
            action.add_argument("--project", required=True, help="project slug")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project {options['project']!r}.", returncode=2)
        try:
            getattr(self, f"_{options['action']}")(project=project, options=options)
        except ApplicationError as exc:
            raise CommandError(f"{exc.field}: {exc.message}" if exc.field else exc.message, returncode=2) from exc

    def _list(self, *, project: Project, options: dict[str, Any]) -> None:
        rows = [
            {
                "id": g.pk,
                "stage": g.stage,
                "rico_id": g.screen.rico_id,
                "question": g.question.final_text or g.question.text if g.question else None,
                "source": g.source,
                "active": g.active,
                "served": getattr(g, "served"),  # noqa: B009  (annotated by the selector)
                "correct": getattr(g, "correct"),  # noqa: B009
                "exposures": g.exposures,
                "retired": bool(project.gold_exposures_max) and g.exposures >= project.gold_exposures_max,
                "answer": g.answer,
            }
            for g in gold_items_with_results(project=project, stage=options["stage"])
        ]
        if options["json"]:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        for r in rows:
            fared = f"{r['correct']}/{r['served']} right" if r["served"] else "not served yet"
            state = ("" if r["active"] else " (inactive)") + (" (retired)" if r["retired"] else "")
            fared += f", {r['exposures']} exposures" if r["exposures"] else ""
            about = f" {r['question']!r}" if r["question"] else ""
            self.stdout.write(f"#{r['id']}\t{r['stage']}\t{r['rico_id']}{about}\t{r['source']}\t{fared}{state}")

    def _create(self, *, project: Project, options: dict[str, Any]) -> None:
        items = _load_json(options["file"])
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise CommandError("The file holds a JSON list of objects.", returncode=2)
        created = []
        with transaction.atomic():
            for n, item in enumerate(items):
                try:
                    created.append(self._create_one(project=project, item=item).pk)
                except ApplicationError as exc:
                    where = f"item {n}" + (f", {exc.field}" if exc.field else "")
                    raise CommandError(f"{where}: {exc.message} Nothing was created.", returncode=2) from exc
        self.stdout.write(json.dumps({"created": created}))

    def _create_one(self, *, project: Project, item: dict[str, Any]) -> Any:
        unknown = set(item) - {"stage", "rico_id", "question", "answer", "note"}
        if unknown:
            raise ApplicationError(f"Unknown keys: {', '.join(sorted(unknown))}.")
        if not isinstance(item.get("answer"), dict):
            raise ApplicationError("An object with the stage's submit body.", field="answer")
        question = item.get("question")
        return gold_unit_create(
            project=project,
            stage=str(item.get("stage", "")),
            rico_id=str(item.get("rico_id", "")),
            question_text=str(question) if question is not None else None,
            answer=item["answer"],
            user=None,
            note=str(item.get("note", "")),
        )

    def _promote(self, *, project: Project, options: dict[str, Any]) -> None:
        answer = _load_json(options["answer"]) if options["answer"] else None
        if answer is not None and not isinstance(answer, dict):
            raise CommandError("The answer file holds a JSON object (a submit body).", returncode=2)
        gold = gold_promote(project=project, assignment_id=options["assignment_id"], user=None, answer=answer)
        self.stdout.write(json.dumps({"id": gold.pk, "stage": gold.stage, "answer": gold.answer}))

    def _deactivate(self, *, project: Project, options: dict[str, Any]) -> None:
        gold = gold_set_active(project=project, gold_id=options["gold_id"], active=False)
        self.stdout.write(json.dumps({"id": gold.pk, "active": gold.active}))

    def _activate(self, *, project: Project, options: dict[str, Any]) -> None:
        gold = gold_set_active(project=project, gold_id=options["gold_id"], active=True)
        self.stdout.write(json.dumps({"id": gold.pk, "active": gold.active}))
