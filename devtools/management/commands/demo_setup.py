"""python manage.py demo_setup [--screens N] [--url URL] [--migrate]

Builds the demo project of ``make demo`` (idempotent): generated RICO-format screens under
``DATA_DIR/demo/screens``, imported into project ``demo``, and one user per role with a fresh
password kept across re-runs in ``DATA_DIR/demo-passwords.txt`` (mode 0600), printed with the URL
the demo is served on (``--url``: ``make demo`` passes its ``DEMO_BIND``). ``--migrate`` applies the
migrations first, in the same process (``make demo`` saves a Django start-up). See ``docs/demo.md``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from devtools.demo.services import PASSWORDS_FILE, demo_project_setup

URL = "http://127.0.0.1:8000/"


class Command(BaseCommand):
    help = "Create the demo project, its screens and its users; print the logins and write them to a file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--screens", type=int, default=40, help="how many generated screens (default 40)")
        parser.add_argument("--url", default=URL, help=f"the URL the demo is served on, printed (default {URL})")
        parser.add_argument("--migrate", action="store_true", help="apply the database migrations first")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["screens"] < 1:
            raise CommandError("--screens must be at least 1")
        url = options["url"] if options["url"].endswith("/") else options["url"] + "/"
        if not url.startswith(("http://", "https://")):
            raise CommandError("--url must start with http:// or https://")
        if options["migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        passwords = settings.DATA_DIR / PASSWORDS_FILE
        result = demo_project_setup(
            screens_dir=settings.DATA_DIR / "demo" / "screens",
            passwords_file=passwords,
            count=options["screens"],
            url=url,
        )
        s = result.import_summary
        self.stdout.write(
            f"Project '{result.project.slug}': {s['imported']} screens imported, {s['already_present']} already "
            f"present, {len(s['rejected'])} rejected ({result.generated} generated now)."
        )
        self.stdout.write(
            f"Gold set (qualification and control items): {result.gold.get('prefilter', 0)} pre-filtering, "
            f"{result.gold.get('answers', 0)} answers."
        )
        for r in s["rejected"]:
            self.stderr.write(f"  rejected {r['name']}: {r['reason']}")
        self.stdout.write(f"\nOpen {url} and log in as:\n")
        width = max(len(login["username"]) for login in result.logins)
        self.stdout.write(f"  {'username'.ljust(width)}  {'password'.ljust(12)}  role")
        for login in result.logins:
            self.stdout.write(f"  {login['username'].ljust(width)}  {login['password'].ljust(12)}  {login['role']}")
        self.stdout.write(f"\nThe logins are also in {passwords} (readable by you only; kept across re-runs).")
