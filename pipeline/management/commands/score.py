"""python manage.py score --gold FILE [--gold FILE] --pred FILE [--json] [--per-example]

Scores model predictions against ScreenQA release files (or a DocVQA file, with ANLS). The rules
are in ``pipeline.metrics`` and docs/scoring.md; each task prints two averages, one line each: over
the gold examples (a missing prediction scores 0) and over the predicted examples only. Malformed
input: a one-line error on stderr and exit code 2, nothing scored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pipeline.metrics.scorer import TASK_METRICS, ScoringInputError, scoring_run

_TITLES = {
    "sqa_s": "SQA-S",
    "sqa_uic": "SQA-UIC",
    "sqa_uic_bb": "SQA-UIC-BB",
    "sqa_l": "SQA-L",
    "answer_matching": "answer matching",
    "anls": "ANLS",
}


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


class Command(BaseCommand):
    help = "Score predictions against ScreenQA gold files (SQA-S/UIC/UIC-BB/L, nDCG_v, F1) or DocVQA (ANLS)."
    # Runs on files only: no database, no system checks needed.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--gold", action="append", required=True, type=Path, help="gold file (repeatable)")
        parser.add_argument("--pred", required=True, type=Path, help="prediction file (JSON list)")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")
        parser.add_argument("--per-example", action="store_true", help="print one JSON line per example first")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = scoring_run(
                gold_paths=options["gold"], prediction_path=options["pred"], per_example=options["per_example"]
            )
        except ScoringInputError as exc:
            raise CommandError(exc.message, returncode=2) from exc
        for row in report.examples:
            self.stdout.write(json.dumps(row, ensure_ascii=False, sort_keys=True))
        if options["json"]:
            self.stdout.write(json.dumps(report.summary, sort_keys=True))
            return
        for task, metrics in TASK_METRICS.items():
            if task not in report.summary:
                continue
            figures = report.summary[task]
            over_gold = "  ".join(f"{name} {figures['over_gold'][name]:.4f}" for name in metrics)
            self.stdout.write(
                f"{_TITLES[task]:<16} {'over gold (missing = 0)':<24} {over_gold}"
                f"  n {figures['n_gold']} (missing {figures['missing']})"
            )
            over_predicted = "  ".join(f"{name} {_figure(figures['over_predicted'][name])}" for name in metrics)
            self.stdout.write(f"{'':<16} {'over predicted':<24} {over_predicted}  n {figures['n_predicted']}")
        self.stdout.write(
            f"gold examples {report.summary['gold_examples']}, unmatched predictions {report.summary['unmatched']}"
        )
