"""python manage.py postprocess <project-slug> [--agreement-rule RULE] [--short-answers] [--batch-size N] [--json]

Runs post-processing of a project in this process (no queue), then, with ``--short-answers``,
generates the missing short answers. Safe to re-run. Each run is recorded as a ReleaseJob, so the
lead's page shows it. Prints the agreement rule, the agreement shares and the counts by reason.
``--agreement-rule`` first sets the project's rule (as the admin does; it stays set), so every
question is decided under it.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.exceptions import ApplicationError
from annotation.models import AgreementRule, ReleaseJob
from annotation.services.projects import project_agreement_rule_set
from pipeline.jobs.runner import job_run_now


class Command(BaseCommand):
    help = "Post-process a project's answered questions (agreement, drops, question edits); optionally short answers."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument(
            "--agreement-rule",
            choices=AgreementRule.values,
            help="first set the project's agreement rule (kept for later runs); default: leave it as it is",
        )
        parser.add_argument("--short-answers", action="store_true", help="then generate missing short answers")
        parser.add_argument("--batch-size", type=int, default=500, help="questions per batch (default 500)")
        parser.add_argument("--json", action="store_true", help="print the job results as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.", returncode=2)
        kinds = [ReleaseJob.Kind.POSTPROCESS] + ([ReleaseJob.Kind.SHORT_ANSWERS] if options["short_answers"] else [])
        if options["agreement_rule"]:
            try:
                project_agreement_rule_set(slug=options["project"], rule=options["agreement_rule"])
            except ApplicationError as exc:
                raise CommandError(exc.message, returncode=2) from exc
        results: dict[str, Any] = {}
        for kind in kinds:
            try:
                job = job_run_now(kind=kind, project_slug=options["project"], batch_size=options["batch_size"])
            except ApplicationError as exc:
                raise CommandError(exc.message, returncode=2) from exc
            results[kind] = {"job": job.pk, **job.result}
        if options["json"]:
            self.stdout.write(json.dumps(results, sort_keys=True))
            return
        post = results[ReleaseJob.Kind.POSTPROCESS]
        summary = post["summary"]
        self.stdout.write(f"job #{post['job']}: decided {post['decided']} questions, {post['changed']} changed")
        shares = summary["agreement_shares"]
        counts = summary["agreement"]
        self.stdout.write(
            f"agreement (several answers, rule {summary['agreement_rule']}): "
            + ", ".join(f"{label} {100 * shares[label]:.1f}% ({counts[label]})" for label in ("all", "two", "none"))
        )
        for split, entry in summary["splits"].items():
            dropped = ", ".join(f"{reason} {n}" for reason, n in sorted(entry["dropped"].items())) or "none"
            self.stdout.write(f"{split}: kept {entry['kept']}, dropped {dropped}, pending {entry['pending']}")
        if summary["answers_dropped"]:
            answers = ", ".join(f"{reason} {n}" for reason, n in sorted(summary["answers_dropped"].items()))
            self.stdout.write(f"answers dropped: {answers}")
        if ReleaseJob.Kind.SHORT_ANSWERS in results:
            sa = results[ReleaseJob.Kind.SHORT_ANSWERS]
            self.stdout.write(f"job #{sa['job']}: short answers for {sa['generated']} questions {sa['sources']}")
