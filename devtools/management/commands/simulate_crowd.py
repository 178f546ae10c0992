"""python manage.py simulate_crowd --project SLUG [--create] --annotators N [--seed S] [--screens M] [--http URL]
    [--json] [--profiles careful=0.7,careless=0.1,spammer=0.2] [--qc]

Scripted annotators drive the project through every stage (pre-filtering, both question
passes, the not-answerable sample, answers) until it is ready for post-processing. By
default through the services; ``--http URL`` goes through the REST API of a running server.
``--screens M`` first adds M synthetic screens (for a demo from nothing; ``--create`` makes the
project first when it does not exist). The scripted crowd has its own world (which apps are not in
English, which screens are out of sync, questions quoting a text): give it a project of its own,
not one with gold made elsewhere (the demo's gold is the generator's truth, which that world does not
share, so the crowd would not qualify there). ``--profiles``: the
shares of annotator profiles (default all careful); ``--qc``: the lead makes gold before each
stage with gold items, so the crowd qualifies and meets control items (docs/quality.md).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.exceptions import ApplicationError
from annotation.models import Project
from annotation.services.screens import project_get_or_create
from devtools.crowd import crowd_simulate


def profile_shares(text: str) -> dict[str, float]:
    """``careful=0.7,spammer=0.3`` as shares (``crowd_simulate`` checks the names)."""
    shares: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        try:
            shares[name.strip()] = float(value)
        except ValueError as exc:
            raise CommandError(f"--profiles: {part!r} is not NAME=SHARE.", returncode=2) from exc
    return shares


class Command(BaseCommand):
    help = "Drive a project through the whole pipeline with a scripted crowd."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--create", action="store_true", help="create the project if it does not exist")
        parser.add_argument("--annotators", type=int, default=8, help="crowd size (default 8; 4+ for 3 answers)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--screens", type=int, default=0, help="first add this many synthetic screens")
        parser.add_argument("--http", help="base URL of a running server, e.g. http://127.0.0.1:8000")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")
        parser.add_argument("--profiles", help="profile shares, e.g. careful=0.7,careless=0.1,spammer=0.2")
        parser.add_argument("--qc", action="store_true", help="the lead makes gold first (quality control)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None and options["create"]:
            try:
                # a known seed, so that a crowd replays (a product's project gets a random one)
                project = project_get_or_create(slug=options["project"], split_seed="screenqa")
            except ApplicationError as exc:
                raise CommandError(exc.message, returncode=2) from exc
        if project is None:
            raise CommandError(f"No project {options['project']!r}.", returncode=2)
        if options["screens"] < 0:
            raise CommandError("--screens must be 0 or more.", returncode=2)
        try:
            summary = crowd_simulate(
                project=project,
                annotators=options["annotators"],
                seed=options["seed"],
                http_url=options["http"],
                new_screens=options["screens"],
                profiles=profile_shares(options["profiles"]) if options["profiles"] else None,
                qc=options["qc"],
            )
        except ApplicationError as exc:
            raise CommandError(f"--{exc.field}: {exc.message}" if exc.field else exc.message, returncode=2) from exc
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2, sort_keys=True))
            return
        progress = summary["progress"]
        self.stdout.write(f"crowd of {summary['annotators']} via {summary['via']} in {summary['seconds']} s")
        for stage, n in summary["submitted"].items():
            self.stdout.write(f"  {stage:15} {n:6} submitted  {summary['skipped'].get(stage, 0):4} skipped")
        self.stdout.write(f"  screens:   {progress['screens']}")
        self.stdout.write(f"  excluded:  {progress['excluded']}")
        self.stdout.write(f"  questions: {progress['questions']}")
        for stage, n in summary["lead_gold"].items():
            self.stdout.write(f"  gold made by the lead in {stage}: {n}")
        for stage, refused in summary["refused"].items():
            self.stdout.write(f"  refused in {stage}: {', '.join(sorted(refused))}")
        ready = "yes" if progress["ready_for_postprocessing"] else "no"
        self.stdout.write(f"ready for post-processing: {ready}")
        if not progress["ready_for_postprocessing"]:
            self.stderr.write("Some work could not be finished by this crowd (too few annotators for 3 answers?).")
