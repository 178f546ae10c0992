"""``python manage.py import_rico PATH --project SLUG [--json] [--device-size WxH]``.

Imports the RICO pairs of a folder or zip into a project (created if missing). Progress bar
on stderr, summary on stdout. Exit code 0 when nothing was rejected, 2 when something was,
1 when the source cannot be used at all. For operators with shell access (no web permission
check applies: whoever can run ``manage.py`` administers the installation).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from annotation.exceptions import ApplicationError
from annotation.services.screens import project_get_or_create
from pipeline.ingest import ImportSummary, import_screens


def parse_device_size(value: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d{1,6})\s*[xX]\s*(\d{1,6})\s*", value)
    if not match or int(match[1]) == 0 or int(match[2]) == 0:
        raise CommandError(f"--device-size must look like 1440x2560, got {value!r}")
    return int(match[1]), int(match[2])


class Command(BaseCommand):
    help = "Import RICO screens (folder or .zip of <id>.jpg|png + <id>.json, or RICO traces) into a project."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="a folder or a .zip file")
        parser.add_argument("--project", required=True, help="project slug (created if missing)")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")
        parser.add_argument("--device-size", help="VH device space WxH (default: the project's, 1440x2560)")

    def handle(self, *args: Any, **options: Any) -> None:
        device = parse_device_size(options["device_size"]) if options["device_size"] else None
        bar = tqdm(total=0, unit="pair", file=sys.stderr, desc="import")

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            project = project_get_or_create(slug=options["project"])
            summary = import_screens(project=project, source=options["path"], device_size=device, progress=progress)
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        finally:
            bar.close()
        self._print(summary, as_json=options["json"])
        if summary.rejected:
            raise CommandError(f"{len(summary.rejected)} pair(s) rejected", returncode=2)

    def _print(self, summary: ImportSummary, *, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(summary.as_dict(), indent=2))
            return
        self.stdout.write(f"imported: {len(summary.imported)}")
        self.stdout.write(f"already present: {len(summary.already_present)}")
        self.stdout.write(f"rejected: {len(summary.rejected)}")
        for name, reason in summary.rejected:
            self.stdout.write(f"  {name}: {reason}")
