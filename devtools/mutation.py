"""Mutation testing with mutmut 3: plant small bugs in one module at a time, run only its mirrored
tests, and count the bugs no test notices (the *surviving mutants*). docs/mutation.md says how to read
the figures and what to do with a survivor.

    python -m devtools.mutation                      # every target, one after the other
    python -m devtools.mutation agreement decide     # some targets
    python -m devtools.mutation --list               # the targets, their modules and tests
    python -m devtools.mutation agreement --survivors   # run the last run's survivors again

Each target runs in its own folder, ``.mutation/<target>/`` (git-ignored): links to the source
folders, a ``pyproject.toml`` whose ``[tool.mutmut]`` names the target's modules and tests, and
mutmut's ``mutants/`` copy of the tree. The working tree itself is never modified, so a run can go
on while you work (it reads the files as they were when it started).

The database: the test settings' PostgreSQL (``DATABASE_URL``), under a name of its own
(``<name>_mutation``, so the test database is ``test_<name>_mutation`` and a normal test run is not
disturbed). mutmut runs the tests in workers forked from one warmed-up server (``forkserver``: no
database connection is ever inherited); they share the test database with ``--reuse-db``, each test
in a transaction rolled back at its end as in the normal suite. A target whose tests use
``transaction=True`` (which flush the tables) gets one worker. Each fresh run drops the test
database first, so that mutmut's first pytest run creates it from the migrations.

Results: ``.mutation/<target>/summary.json`` (the figures, per module) and ``survivors.txt`` (each
surviving mutant's diff). The exit status is 1 when a module's kill rate is under ``--fail-under``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutation"
# What the tests import or read; linked into each target's folder (mutmut copies them into mutants/).
SOURCE_PATHS = ("annotation", "pipeline", "frontend", "devtools")
ALSO_COPY = ("fixtures", "docs", "manage.py")
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/screenqa"  # annotation/settings/test.py
# Markers of tests that never run here (a browser, real data, Docker, scale runs).
EXCLUDED_MARKERS = "not browser and not slow and not realdata and not image"
# mutmut's verdicts, as ``mutmut results`` names them.
KILLED = ("killed", "timeout")


@dataclass(frozen=True)
class Target:
    mutate: tuple[str, ...]  # the modules (paths, or globs ending in * or .py) whose functions are mutated
    tests: tuple[str, ...]  # their mirrored tests: the only tests run
    # Functions (regular expressions of their names, whole) outside the measure: their mutants are
    # counted apart ("out of scope") and not in the kill rate. Only for code that is not the product's
    # rule: the scripted crowd's behaviour, which lives in each stage's module and is checked by the
    # crowd's own tests (docs/mutation.md). No selected test reaches them, so mutmut never runs them.
    skip: tuple[str, ...] = ()


# The scripted crowd's behaviour in the stage modules (devtools/crowd.py calls it; its tests are
# tests/devtools/test_crowd.py, minutes long, so not run per mutant): ``crowd_*`` methods and the
# helpers only they call.
CROWD = (r"_?crowd_\w+", "_expand", "_spam_answer", "_second_element", "_suggestion_accepted")

TARGETS: dict[str, Target] = {
    # who may see and do what (the authorization matrix, test_authz_matrix.py, is the end-to-end check
    # of the same rules; at about a minute a run it is too slow to run once per mutant)
    "permissions": Target(("annotation/permissions.py",), ("tests/annotation/test_permissions.py",)),
    # the stage engine, its queue rules, gold scores and withdrawals
    "stages-engine": Target(
        ("pipeline/engine/services.py",),
        (
            "tests/pipeline/engine/test_engine.py",
            "tests/pipeline/engine/test_claim_plan.py",
            "tests/pipeline/stages/test_queue_order.py",
            "tests/pipeline/quality/test_qualification_flow.py",  # the gold pick's rules, through the engine
        ),
    ),
    "stages-answers": Target(
        ("pipeline/stages/answers.py",),
        (
            "tests/pipeline/stages/test_answers.py",
            "tests/pipeline/stages/test_forms.py",
            "tests/pipeline/stages/test_progress_answers.py",
            "tests/pipeline/quality/test_withdraw_and_restore.py",
            "tests/frontend/test_workspace.py",
            "tests/pipeline/assist/test_assist.py",  # the stage's suggestion methods (model assistance)
        ),
        skip=CROWD,
    ),
    "stages-questions": Target(
        ("pipeline/stages/questions.py",),
        (
            "tests/pipeline/stages/test_questions.py",
            "tests/pipeline/stages/test_forms.py",
            "tests/pipeline/quality/test_withdraw_and_restore.py",
            "tests/pipeline/quality/test_mine.py",
            "tests/frontend/test_workspace.py",
        ),
        skip=CROWD,
    ),
    "stages-prefilter": Target(
        ("pipeline/stages/prefilter.py",),
        (
            "tests/pipeline/stages/test_prefilter.py",
            "tests/pipeline/stages/test_prefilter_withdraw.py",
            "tests/pipeline/stages/test_forms.py",
            "tests/pipeline/assist/test_assist.py",  # the stage's suggestion methods (model assistance)
        ),
        skip=CROWD,
    ),
    "stages-not-answerable": Target(
        ("pipeline/stages/not_answerable.py",),
        ("tests/pipeline/stages/test_not_answerable.py", "tests/pipeline/stages/test_forms.py"),
        skip=CROWD,
    ),
    "stages-leases": Target(("pipeline/stages/leases.py",), ("tests/pipeline/stages/test_leases.py",)),
    # review: its queue (double review), verdicts, gold reviews' scores, a stopped reviewer's withdrawal
    "stages-review": Target(
        ("pipeline/stages/review.py",),
        (
            "tests/pipeline/stages/test_review.py",
            "tests/pipeline/stages/test_review_gold.py",
            "tests/pipeline/stages/test_forms.py",
            "tests/pipeline/quality/test_withdraw_and_restore.py",
            "tests/pipeline/quality/test_standing.py",
        ),
        skip=CROWD,
    ),
    # annotator quality: standings and every pause rule, gold items, consensus, mining, the report
    "quality-standing": Target(
        ("pipeline/quality/standing.py",),
        (
            "tests/pipeline/quality/test_standing.py",
            "tests/pipeline/quality/test_control_draw.py",
            "tests/pipeline/quality/test_monitoring.py",
            "tests/pipeline/quality/test_qualification_flow.py",
            "tests/pipeline/quality/test_withdraw_and_restore.py",
        ),
    ),
    # the rules table and the sequential test behind the accuracy rule
    "quality-rules": Target(
        ("pipeline/quality/rules.py", "pipeline/quality/sequential.py"),
        (
            "tests/pipeline/quality/test_rules.py",
            "tests/pipeline/quality/test_sequential.py",
            "tests/pipeline/quality/test_standing.py",
        ),
    ),
    "quality-gold": Target(
        ("pipeline/quality/gold.py",),
        (
            "tests/pipeline/quality/test_gold.py",
            "tests/pipeline/quality/test_gold_from_data.py",
            "tests/pipeline/quality/test_gold_plan.py",
            "tests/pipeline/stages/test_review_gold.py",
        ),
    ),
    # what is held back before post-processing (provisional work), and the gold reviews' pick
    "quality-provisional": Target(
        ("pipeline/quality/provisional.py",),
        ("tests/pipeline/quality/test_provisional.py", "tests/pipeline/quality/test_release_exclusion.py"),
    ),
    "quality-review-gold": Target(("pipeline/quality/review_gold.py",), ("tests/pipeline/stages/test_review_gold.py",)),
    "quality-consensus": Target(("pipeline/quality/consensus.py",), ("tests/pipeline/quality/test_consensus.py",)),
    "quality-mine": Target(
        ("pipeline/quality/mine.py",), ("tests/pipeline/quality/test_mine.py", "tests/pipeline/quality/test_tells.py")
    ),
    "quality-report": Target(("pipeline/quality/report.py",), ("tests/pipeline/quality/test_report.py",)),
    # what an annotator did with a model's suggestion, and the rubber-stamping rule's input
    "quality-assist-use": Target(("pipeline/quality/assist_use.py",), ("tests/pipeline/assist/test_assist.py",)),
    "quality-release": Target(
        ("pipeline/quality/release.py",),
        (
            "tests/pipeline/quality/test_release.py",
            "tests/pipeline/quality/test_release_exclusion.py",
            "tests/pipeline/quality/test_release_manifest.py",
        ),
    ),
    # post-processing's rules
    "agreement": Target(("pipeline/decisions/agreement.py",), ("tests/pipeline/decisions/test_agreement.py",)),
    "decide": Target(
        ("pipeline/decisions/decide.py",),
        ("tests/pipeline/decisions/test_decide.py", "tests/pipeline/release/test_postprocess.py"),
    ),
    # the official metrics (the differential tests against the release's own code run where ../shared has it)
    "metrics-matching": Target(("pipeline/metrics/matching.py",), ("tests/pipeline/metrics/test_matching.py",)),
    "metrics-task": Target(
        (
            "pipeline/metrics/anls.py",
            "pipeline/metrics/rouge.py",
            "pipeline/metrics/squad.py",
            "pipeline/metrics/uic.py",
        ),
        ("tests/pipeline/metrics/test_task_metrics.py", "tests/pipeline/metrics/test_reference.py"),
    ),
    "metrics-scorer": Target(("pipeline/metrics/scorer.py",), ("tests/pipeline/metrics/test_scorer.py",)),
}
# What ``make mutation`` runs without arguments: the modules measured in docs/mutation.md.
DEFAULT_TARGETS = ("permissions", "agreement", "decide", "metrics-matching", "metrics-task", "metrics-scorer")


def mutmut() -> str:
    found = Path(sys.executable).with_name("mutmut")
    return str(found) if found.exists() else shutil.which("mutmut") or "mutmut"


def database_url() -> str:
    """The test settings' database under a name of its own (``<name>_mutation``)."""
    url = os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL
    parts = urlsplit(url)
    if not parts.scheme.startswith("postgres"):
        raise SystemExit(f"mutation testing runs on PostgreSQL (the test settings); DATABASE_URL is {url!r}")
    name = parts.path.lstrip("/") or "screenqa"
    return urlunsplit(parts._replace(path=f"/{name}_mutation"))


def test_database_drop(url: str) -> None:
    """Drop ``test_<name>`` so that the next pytest run creates it from the migrations."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = f"test_{parts.path.lstrip('/')}"
    server = urlunsplit(parts._replace(scheme="postgresql", path="/postgres"))
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def uses_transactions(tests: tuple[str, ...]) -> bool:
    files = [p for t in tests for p in ([ROOT / t] if t.endswith(".py") else (ROOT / t).rglob("test_*.py"))]
    return any("transaction=True" in p.read_text() for p in files if p.is_file())


def toml_list(values: tuple[str, ...] | list[str]) -> str:
    return json.dumps(list(values))


def folder_prepare(name: str, target: Target, *, fresh: bool) -> Path:
    """``.mutation/<name>/``: links to the tree, and the project's pyproject.toml with the target's
    ``[tool.mutmut]``."""
    folder = WORK / name
    if fresh and folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for entry in (*SOURCE_PATHS, *ALSO_COPY, "tests"):
        link = folder / entry
        if not link.is_symlink():
            link.symlink_to(ROOT / entry)
    shared = ROOT.parent / "shared"  # real data and the release's reference code, where present
    if shared.is_dir() and not (folder / "shared").is_symlink():
        (folder / "shared").symlink_to(shared)
    pyproject = (ROOT / "pyproject.toml").read_text()
    if "mutmut" in tomllib.loads(pyproject).get("tool", {}):
        raise SystemExit("pyproject.toml has a [tool.mutmut] section: devtools/mutation.py writes its own")
    config = f"""
[tool.mutmut]
source_paths = {toml_list(SOURCE_PATHS)}
only_mutate = {toml_list(target.mutate)}
pytest_add_cli_args_test_selection = {toml_list(target.tests)}
pytest_add_cli_args = {toml_list(["--reuse-db", "-m", EXCLUDED_MARKERS])}
also_copy = {toml_list(ALSO_COPY)}
process_isolation = "forkserver"
use_git_change_detection = false
log_to_file = true
"""
    (folder / "pyproject.toml").write_text(pyproject + config)
    return folder


def results(folder: Path) -> dict[str, str]:
    """Every mutant's verdict: ``{name: status}``."""
    out = subprocess.run(
        [mutmut(), "results", "--all", "true"], cwd=folder, capture_output=True, text=True, check=True
    ).stdout
    found = {}
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name:
            found[name] = status
    return found


def module_of(mutant: str) -> str:
    """``pipeline.decisions.agreement.x_box_iou__mutmut_3`` -> ``pipeline/decisions/agreement.py``."""
    module = re.split(r"\.x[_ǁ]", mutant, maxsplit=1)[0]
    return module.replace(".", "/") + ".py"


def function_of(mutant: str) -> str:
    """``pipeline.stages.answers.xǁAnswersǁopen_to__mutmut_3`` -> ``open_to``;
    ``pipeline.stages.answers.x__crowd_element__mutmut_1`` -> ``_crowd_element``."""
    mangled = mutant.rsplit("__mutmut_", 1)[0]
    return mangled.rsplit("ǁ", 1)[1] if "ǁ" in mangled else mangled.split(".x_", 1)[1]


def out_of_scope(mutant: str, skip: tuple[str, ...]) -> bool:
    return any(re.fullmatch(pattern, function_of(mutant)) for pattern in skip)


def summarise(
    folder: Path, seconds: float, skip: tuple[str, ...] = (), carried: set[str] | None = None
) -> dict[str, Any]:
    """The figures of ``folder``'s last run. ``carried``: the earlier run's survivors, when only they
    ran again (``--survivors``); mutmut then reports every other mutant "not checked", and those
    were killed by the earlier run."""
    verdicts = results(folder)
    if carried is not None:
        verdicts = {m: "killed" if s == "not checked" and m not in carried else s for m, s in verdicts.items()}
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    for mutant, status in list(verdicts.items()):
        if out_of_scope(mutant, skip):
            by_module[module_of(mutant)]["out of scope"] += 1
            del verdicts[mutant]
            continue
        by_module[module_of(mutant)][status] += 1
    modules = {}
    for module, counts in sorted(by_module.items()):
        tested = sum(counts.values()) - counts["skipped"] - counts["out of scope"]
        killed = sum(counts[s] for s in KILLED)
        modules[module] = {
            "mutants": sum(counts.values()),
            "killed": killed,
            "survived": counts["survived"],
            "no_tests": counts["no tests"],
            "out_of_scope": counts["out of scope"],
            "other": {
                s: n for s, n in counts.items() if s not in (*KILLED, "survived", "no tests", "skipped", "out of scope")
            },
            "kill_rate": round(killed / tested, 4) if tested else None,
        }
    survivors = sorted(m for m, s in verdicts.items() if s not in (*KILLED, "skipped"))
    with (folder / "survivors.txt").open("w") as out:
        for mutant in survivors:
            if verdicts[mutant] == "no tests":  # no test reaches its function: the name says enough
                out.write(f"{mutant} (no tests)\n\n")
                continue
            shown = subprocess.run([mutmut(), "show", mutant], cwd=folder, capture_output=True, text=True).stdout
            diff = [line for line in shown.splitlines() if line[:1] in "-+" and line[:3] not in ("---", "+++")]
            out.write(f"{mutant} ({verdicts[mutant]})\n" + "\n".join(f"    {line}" for line in diff) + "\n\n")
    summary = {"seconds": round(seconds), "modules": modules, "survivors": survivors}
    (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def run(name: str, *, jobs: int, survivors: bool, verbose: bool) -> dict[str, Any]:
    target = TARGETS[name]
    folder = folder_prepare(name, target, fresh=not survivors)
    env = {**os.environ, "DATABASE_URL": database_url()}
    names: list[str] = []
    if survivors:
        last = folder / "summary.json"
        if not last.exists():
            raise SystemExit(f"{name}: no earlier run to take the survivors of")
        names = json.loads(last.read_text())["survivors"]
        if not names:
            print(f"{name}: no survivor to run again")
            return json.loads(last.read_text())
    else:
        test_database_drop(env["DATABASE_URL"])
    workers = 1 if uses_transactions(target.tests) else jobs
    print(f"{name}: mutating {', '.join(target.mutate)}; tests {', '.join(target.tests)}; {workers} worker(s)")
    started = time.monotonic()
    with (folder / "run.log").open("w") as log:
        done = subprocess.run(
            [mutmut(), "run", "--max-children", str(workers), *names],
            cwd=folder,
            env=env,
            stdout=None if verbose else log,
            stderr=subprocess.STDOUT if not verbose else None,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"{name}: mutmut failed (exit {done.returncode}); see {folder / 'run.log'}")
    return summarise(folder, time.monotonic() - started, target.skip, set(names) if survivors else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("targets", nargs="*", help=f"default: {' '.join(DEFAULT_TARGETS)}; 'all' for every target")
    parser.add_argument("--list", action="store_true", help="list the targets and stop")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument("--survivors", action="store_true", help="run only the last run's survivors again")
    parser.add_argument("--fail-under", type=float, default=90.0, help="kill rate in %% under which to fail")
    parser.add_argument("--verbose", action="store_true", help="show mutmut's own output")
    args = parser.parse_args(argv)
    if args.list:
        for name, target in TARGETS.items():
            print(f"{name:24} {' '.join(target.mutate)}\n{'':24} tests: {' '.join(target.tests)}")
        return 0
    names = list(TARGETS) if args.targets == ["all"] else args.targets or list(DEFAULT_TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        parser.error(f"unknown targets {unknown}; see --list")
    failed = []
    for name in names:
        summary = run(name, jobs=args.jobs, survivors=args.survivors, verbose=args.verbose)
        for module, figures in summary["modules"].items():
            rate = figures["kill_rate"]
            shown = "n/a" if rate is None else f"{rate:.1%}"
            measured = figures["mutants"] - figures.get("out_of_scope", 0)
            apart = f", {figures['out_of_scope']} out of scope" if figures.get("out_of_scope") else ""
            print(
                f"  {module}: {figures['killed']}/{measured} killed ({shown}), "
                f"{figures['survived']} survived, {figures['no_tests']} without tests{apart}"
            )
            if rate is not None and rate * 100 < args.fail_under:
                failed.append(module)
        print(f"  {summary['seconds']} s; survivors in {WORK / name / 'survivors.txt'}")
    if failed:
        print(f"under {args.fail_under:g}% killed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
