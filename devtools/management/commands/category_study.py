"""python manage.py category_study [--data ../shared/data]

The question categories (``pipeline.analytics.figures.question_category``) on the release's real
questions: the validation and test questions of ScreenQA Short (../shared/data/screen_qa, read at
run time, never copied), printed as a Markdown table next to the v1 paper's table 1. The table in
docs/analytics.md is this command's output.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pipeline.analytics.figures import OTHER, QUESTION_CATEGORIES, question_category

DEFAULT_DATA = Path(__file__).resolve().parents[4] / "shared" / "data"


class Command(BaseCommand):
    help = "Share of each question category on the release's real questions, next to the paper's."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")

    def handle(self, *args: Any, data: Path, **options: Any) -> None:
        folder = data / "screen_qa" / "short_answers"
        if not folder.is_dir():
            raise CommandError(f"--data: {folder} is absent")
        questions = [
            record["question"]
            for split in ("validation", "test")
            for record in json.loads((folder / f"{split}.json").read_text(encoding="utf-8"))
        ]
        counts = Counter(question_category(text) for text in questions)
        n = len(questions)
        self.stdout.write(f"{n} questions (ScreenQA Short validation + test)\n")
        self.stdout.write("| Category | Ours | Paper | Difference |\n|---|---|---|---|")
        worst = 0.0
        for c in (*QUESTION_CATEGORIES, OTHER):
            share = counts[c.key] / n
            paper = c.paper_share or 0.0
            worst = max(worst, abs(share - paper))
            self.stdout.write(f"| {c.label} | {share:.1%} | {paper:.1%} | {share - paper:+.1%} |")
        self.stdout.write(f"\nlargest difference: {worst:.1%}")
