"""python manage.py generate_screens OUT --count N [--seed S] [--start-id ID] [--kinds K ...] [--workers W] [--zip]

Writes RICO-format demo screens (``<id>.jpg`` + ``<id>.json``) into the folder OUT, or into
the zip file OUT with ``--zip``. Deterministic for a seed. See ``docs/demo.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from devtools.demo.generator import KINDS, SIZES, generate_screens, generate_zip


def _size(value: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in value.lower().split("x"))
    except ValueError as exc:
        raise CommandError(f"--sizes: {value!r} is not WIDTHxHEIGHT") from exc
    if w <= 0 or h <= 0:
        raise CommandError(f"--sizes: {value!r} must be positive")
    return w, h


class Command(BaseCommand):
    help = "Generate RICO-format demo screens (screenshot + view hierarchy JSON)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out", help="output folder (or zip file with --zip)")
        parser.add_argument("--count", type=int, required=True)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--start-id", type=int, default=900000, help="RICO id of the first screen")
        parser.add_argument("--kinds", nargs="+", choices=KINDS, help=f"screen kinds (default: all of {KINDS})")
        parser.add_argument("--sizes", nargs="+", help="screenshot sizes, e.g. 1080x1920 540x960 (default both)")
        parser.add_argument("--workers", type=int, default=1, help="render on this many processes")
        parser.add_argument("--zip", action="store_true", help="write one zip file instead of a folder")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["count"] < 1:
            raise CommandError("--count must be at least 1")
        sizes = [_size(s) for s in options["sizes"]] if options["sizes"] else list(SIZES)
        out = Path(options["out"])
        write = generate_zip if options["zip"] else generate_screens

        def advance(bar: tqdm, n: int) -> None:
            bar.update(n - bar.n)

        with tqdm(total=options["count"], unit="screen", disable=options["verbosity"] == 0) as bar:
            ids = write(
                out,
                count=options["count"],
                seed=options["seed"],
                start_id=options["start_id"],
                sizes=sizes,
                kinds=options["kinds"],
                workers=options["workers"],
                progress=lambda n: advance(bar, n),
            )
        self.stdout.write(f"Wrote {len(ids)} screens ({ids[0]}..{ids[-1]}) to {out}")
