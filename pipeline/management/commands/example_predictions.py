"""python manage.py example_predictions --gold FILE [--gold FILE] --out FILE [--baseline B] [--leave-out N]

Writes example predictions for the questions of ScreenQA release files, in the format
``manage.py score`` reads (docs/scoring.md): ``question`` (the default) reads only the question,
``first-answer`` copies each question's first ground truth. Malformed input: a one-line error on
stderr and exit code 2, nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pipeline.metrics.examples import BASELINES, example_predictions
from pipeline.metrics.scorer import ScoringInputError


class Command(BaseCommand):
    help = "Write example predictions for a release's questions (for trying manage.py score)."
    # Runs on files only: no database, no system checks needed.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--gold", action="append", required=True, type=Path, help="release file (repeatable)")
        parser.add_argument("--out", required=True, type=Path, help="the prediction file to write (JSON list)")
        parser.add_argument(
            "--baseline", choices=BASELINES, default="question", help="how to predict (default question)"
        )
        parser.add_argument("--leave-out", type=int, default=0, help="leave out every N-th question (default none)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            predictions = example_predictions(
                gold_paths=options["gold"], baseline=options["baseline"], leave_out=options["leave_out"]
            )
        except ScoringInputError as exc:
            raise CommandError(exc.message, returncode=2) from exc
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(predictions, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        self.stdout.write(f"Wrote {len(predictions)} predictions ({options['baseline']}) to {out}.")
