"""An adversarial crowd on the real HTTP API (issue 20, "Proof"; docs/quality.md, "Proof: an
adversarial crowd").

Scripted workers, each with its own token and keep-alive connection, work a project from
pre-filtering to post-processing over the HTTP API of a live server, the calls a crowd platform or
a clever worker's script makes. They see what any annotator sees: the ``next`` payload, the stage
list (``GET /api/projects/<slug>/stages/``: ``available``, ``open_assignment``, their ``standing``),
the refusals. Kinds (``KINDS``):

* ``careful``: the scripted truth, with ``SLIP`` (3%) of items wrong (pre-filtering: one judgment
  flipped; answers: another element, or ``invalid``);
* ``random``: answers at random from the first item; ``constant``: always the same answer (no
  flag; "not answerable");
* ``sly``: honest while qualifying, random once active;
* ``hit-and-run``: honest while qualifying, then ``HIT_ITEMS`` (10-15) random items, then leaves;
* ``skipper``: honest while qualifying, then looks for control items with every tell it can read
  (``available`` not dropping by one across its ``next``, a unit it has seen before, a unit out of
  the order the real queue serves) and skips the suspected ones, spamming the rest;
  ``cherry-picker``: the same, but answers the suspected ones right (the better strategy when a
  skipped control item counts as wrong);
* ``spam-writer``: writes nonsense questions (``JUNK`` words) in the writing stages;
* ``sly-writer``: writes honestly while qualifying by review, then nonsense (the sly worker of a
  writing stage, which has no gold: only review sampling looks at an active writer's work);
* ``rubber-stamp``: a reviewer who accepts everything.

The lead makes gold over the API (works units with the scripted truth and promotes them, before
pre-filtering and before answers; reviews honestly and makes the reviewed submissions gold reviews,
before the rubber stamp's first review), reviews honestly next to the rubber stamp (rejects nonsense
questions and wrong judgments or answers), starts the not-answerable sample and post-processing
(redoing held-back work with the crowd until it starts).

Simulated time: every lease is backdated by the worker's seconds per item (``backdate``),
so the fast-response rule sees people, not request loops; spammers are clever and take 3-8 s (over
the default 2 s limit) so that what stops them is control items, not speed.

The outcome is read from the database once the run is over (``figures``): which leases were control
items, whose judgments, questions and answers are in the release. The workers never read it.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import F
from rest_framework.authtoken.models import Token

from annotation.models import (
    Answer,
    App,
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    Membership,
    PrefilterJudgment,
    Project,
    Purpose,
    QualityEvent,
    Question,
    QuestionState,
    Role,
    Screen,
    ScreenState,
    Standing,
)
from pipeline.engine import stage_get
from pipeline.jobs.runner import job_run
from pipeline.quality.gold import gold_balance

from .crowd import PROFILES, TRUTH, EngineHttpConnection, Profile, ScriptedAnnotator, crowd_screens_create

KINDS = (
    "careful",
    "random",
    "constant",
    "sly",
    "hit-and-run",
    "skipper",
    "cherry-picker",
    "spam-writer",
    "sly-writer",
    "rubber-stamp",
)
SPAMMERS = ("random", "constant", "sly", "hit-and-run", "skipper", "cherry-picker")
JUDGING = ("careful", *SPAMMERS)  # pre-filtering and answers
WRITING = ("careful", "spam-writer", "sly-writer")  # the question stages
WRITERS = ("spam-writer", "sly-writer")  # whose nonsense questions count as spam
GOLD_STAGES = ("prefilter", "answers")
STAGE_ORDER = ("prefilter", "questions-1", "questions-2", "not-answerable", "answers", "review")
SLIP = 0.03
ATTEMPTS = 20  # the lead's tries at starting post-processing (each 409 of the sweep: the crowd redoes the work);
# the product sets no limit (a lead starts it again until nothing is held): 10 ran out once at full size
# (2026-11-29, seed 1 on PostgreSQL: 71, 90, 84, 82, 73, 57, 42, 14, 1 answers held, converging)
WRITTEN = ("questions-1", "questions-2", "not-answerable")  # stages whose questions a writer wrote (their source)
HIT_ITEMS = (10, 15)
JUNK = ("blorp", "zibber", "quonk", "fnarg", "wibble", "snorf", "grelt", "plimb")
SECONDS = {"careful": (6.0, 30.0), "lead": (20.0, 40.0)}  # everyone else: 3-8 s
WRONG = Profile("wrong", noise=0.0, wrong_element=1.0, seconds=(6.0, 30.0), invalid=0.0, unanswerable=0.0, extra=0.0)


@dataclass(frozen=True)
class Size:
    """A run's size: ``screens`` of the main project, ``careful`` workers (one of each other kind),
    and the careful soak (``soak_careful`` careful workers, ``soak_items`` pre-filtering items each,
    on a project of their own)."""

    screens: int
    careful: int
    soak_careful: int
    soak_items: int


SIZES = {
    "tiny": Size(screens=40, careful=2, soak_careful=0, soak_items=0),
    "ci": Size(screens=60, careful=5, soak_careful=6, soak_items=60),
    "full": Size(screens=160, careful=8, soak_careful=20, soak_items=200),
}


def backdate(assignment_id: int, seconds: float) -> None:
    """Make a lease look ``seconds`` older: simulated work time, as the quality rules see it (the
    start of a lease is all they read). Unlike ``devtools.crowd.took`` it does not fit the lease
    between others' on the unit: a screen asked again after the sweep has a withdrawn lease that
    ended a moment ago, and fitting would leave a careful worker's redo a sub-second submit."""
    Assignment.objects.filter(pk=assignment_id).update(created_at=F("created_at") - timedelta(seconds=seconds))


# --- the wire --------------------------------------------------------------------------------


class Api:
    """One worker's view of the API: its token, its connection, the latency of its ``next`` calls."""

    def __init__(self, *, base_url: str, token: str, slug: str, latencies: list[float]) -> None:
        self.http = EngineHttpConnection(base_url, token)
        self.slug = slug
        self.latencies = latencies

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return self.http.call(method, path, body)

    def stages(self) -> dict[str, dict[str, Any]]:
        status, rows = self.call("GET", f"/api/projects/{self.slug}/stages/")
        if status != 200:
            raise RuntimeError(f"stages: HTTP {status} {rows}")
        return {row["stage"]: row for row in rows}

    def next(self, stage: str) -> tuple[int, Any]:
        started = time.perf_counter()
        out = self.call("POST", f"/api/projects/{self.slug}/stages/{stage}/next/")
        self.latencies.append((time.perf_counter() - started) * 1000)
        return out

    def submit(self, assignment_id: int, body: dict[str, Any]) -> int:
        return self.call("POST", f"/api/assignments/{assignment_id}/submit/", body)[0]

    def skip(self, assignment_id: int) -> int:
        return self.call("POST", f"/api/assignments/{assignment_id}/skip/", {"reason": "screen hard to read"})[0]

    def close(self) -> None:
        self.http.close()


# --- the workers ---------------------------------------------------------------------------


def same_as_truth(body: dict[str, Any], truth: dict[str, Any]) -> bool:
    """Whether a spam submission of a stage with gold happens to say what the scripted truth says (a
    random judgment is often right): the same flags, or the same verdict and elements."""
    if "verdict" not in truth:
        return all(bool(body.get(k)) == bool(truth[k]) for k in ("non_english_app", "vh_out_of_sync"))

    def elements(answer: dict[str, Any]) -> list[str]:
        return sorted(json.dumps(e, sort_keys=True) for e in answer.get("elements", []))

    return body.get("verdict") == truth["verdict"] and elements(body) == elements(truth)


@dataclass
class StageLog:
    """What one worker did in one stage, as the worker saw it."""

    items: int = 0  # submitted or skipped
    honest: int = 0
    spam: list[int] = field(default_factory=list)  # assignment ids submitted as spam
    wrong: list[int] = field(default_factory=list)  # those of them the scripted truth disagrees with
    skipped: list[int] = field(default_factory=list)
    turned: bool = False
    # (assignment id, the tells that fired: "repeat", "order", "available"; none: taken for real work)
    suspects: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    stopped: str = ""  # the standing that refused it: paused / not_qualified
    left: bool = False
    done: bool = False
    hit_budget: int = 0
    last_key: int = -1
    seen: set[int] = field(default_factory=set)


class Worker:
    """A scripted worker of one ``kind`` (``KINDS``) over the API."""

    def __init__(self, *, name: str, kind: str, user: Any, api: Api, seed: int, cap: int = 0) -> None:
        self.name, self.kind, self.user, self.api, self.cap = name, kind, user, api, cap
        self.rng = random.Random(f"{seed}:{name}:adversary")
        self.truth = ScriptedAnnotator(username=f"{name}-truth", seed=seed, profile=TRUTH)
        self.wrong = ScriptedAnnotator(username=f"{name}-wrong", seed=seed, profile=WRONG)
        self.random = ScriptedAnnotator(username=f"{name}-random", seed=seed, profile=PROFILES["spammer"])
        self.logs: dict[str, StageLog] = {}

    def log(self, stage: str) -> StageLog:
        if stage not in self.logs:
            self.logs[stage] = StageLog(hit_budget=self.rng.randint(*HIT_ITEMS))
        return self.logs[stage]

    def seconds(self) -> float:
        return self.rng.uniform(*SECONDS.get(self.kind, (3.0, 8.0)))

    # what to submit

    def honest_body(self, payload: dict[str, Any]) -> dict[str, Any]:
        if payload["stage"] == "review":
            return self.review_body(payload, honest=True)
        body = self.truth.work(payload)
        if self.kind == "careful" and payload["stage"] in GOLD_STAGES and self.rng.random() < SLIP:
            return self.slip(payload, body)
        return body

    def slip(self, payload: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        if payload["stage"] == "prefilter":
            key = self.rng.choice(["non_english_app", "vh_out_of_sync"])
            return {**body, key: not body[key]}
        wrong = self.wrong.work(payload)
        if wrong == body:
            return {**body, "verdict": "invalid", "elements": [], "full_answer": ""}
        return wrong

    def spam_body(self, payload: dict[str, Any]) -> dict[str, Any]:
        stage = payload["stage"]
        if self.kind == "constant":
            if stage == "prefilter":
                return {"non_english_app": False, "vh_out_of_sync": False, "note": ""}
            return {
                "question": payload["question"]["text"],
                "verdict": "not_answerable",
                "elements": [],
                "full_answer": "",
            }
        if stage in ("questions-1", "questions-2"):
            questions = [
                f"What does the {self.rng.choice(JUNK)} {self.rng.choice(JUNK)} {n} mean?"
                for n in range(self.rng.randint(1, 3))
            ]
            return {"questions": questions, **({"flags": []} if stage == "questions-2" else {})}
        if stage == "not-answerable":
            return {"question": f"Where is the {self.rng.choice(JUNK)} of the {self.rng.choice(JUNK)}?"}
        if stage == "review":
            return {"verdict": "accepted", "reason": "", "comment": ""}
        return self.random.work(payload)

    def review_body(self, payload: dict[str, Any], *, honest: bool) -> dict[str, Any]:
        """An honest review: nonsense questions, and judgments or answers that differ from the truth,
        are rejected with the stage's first rule."""
        reviewed = payload["reviewed"]
        submission = reviewed.get("submission") or {}
        reasons = list(reviewed.get("reasons") or [])
        bad = False
        if reviewed["stage"] in ("questions-1", "questions-2", "not-answerable"):
            texts = [q["text"] for q in reviewed.get("questions") or []]
            texts += [*(submission.get("questions") or []), submission.get("question") or ""]
            bad = any(word in text for text in texts for word in JUNK)
        elif reviewed["stage"] == "prefilter":
            truth = self.truth.work({"stage": "prefilter", "screen": payload["screen"]})
            bad = any(submission.get(k) != truth[k] for k in ("non_english_app", "vh_out_of_sync"))
        elif reviewed["stage"] == "answers" and reviewed.get("question"):
            truth = self.truth.work({"stage": "answers", "screen": payload["screen"], "question": reviewed["question"]})
            bad = submission.get("verdict") != truth["verdict"]
        if bad and reasons:
            return {"verdict": "rejected", "reason": reasons[0], "comment": "Please check the rules."}
        return {"verdict": "accepted", "reason": "", "comment": ""}

    # one item

    def step(self, stage: str) -> str:
        """Ask for one item of ``stage`` and deal with it: ``worked``, ``idle`` (nothing now) or ``done``."""
        log = self.log(stage)
        if log.done:
            return "done"
        if self.cap and log.items >= self.cap:
            log.done = True
            return "done"
        watching = self.kind in ("sly", "hit-and-run", "skipper", "cherry-picker", "sly-writer")
        before = self.api.stages().get(stage) if watching else None
        qualifying = before is not None and before["standing"]["status"] in ("", "qualifying")
        if self.kind == "hit-and-run" and before is not None and not qualifying and len(log.spam) >= log.hit_budget:
            log.left = log.done = True  # leaves without asking for more
            return "done"
        status, payload = self.api.next(stage)
        if status == 204:
            return "idle"
        if status == 403:
            if (payload or {}).get("waiting_for"):
                return "idle"
            log.done = True
            log.stopped = self.api.stages().get(stage, {}).get("standing", {}).get("status", "") or "refused"
            return "done"
        if status != 200:
            raise RuntimeError(f"{self.name} next {stage}: HTTP {status} {payload}")
        assignment_id = payload["id"]
        spam = self.decide(stage, log, payload, before, qualifying)
        backdate(assignment_id, self.seconds())
        if spam == "skip":
            code = self.api.skip(assignment_id)
            log.skipped.append(assignment_id)
        else:
            body = self.spam_body(payload) if spam == "spam" else self.honest_body(payload)
            code = self.api.submit(assignment_id, body)
            if spam == "spam":
                log.spam.append(assignment_id)
                if stage in GOLD_STAGES and not same_as_truth(body, self.truth.work(payload)):
                    log.wrong.append(assignment_id)
            else:
                log.honest += 1
        if code not in (200, 409):
            raise RuntimeError(f"{self.name} {spam} {stage} #{assignment_id}: HTTP {code}")
        log.items += 1
        return "worked"

    def decide(
        self, stage: str, log: StageLog, payload: dict[str, Any], before: dict[str, Any] | None, qualifying: bool
    ) -> str:
        """``honest``, ``spam`` or ``skip`` for this item."""
        kind = self.kind
        if kind in ("careful",) or (kind == "rubber-stamp" and stage != "review"):
            return "honest"
        if kind == "rubber-stamp" or (kind == "spam-writer" and stage not in GOLD_STAGES):
            return "spam"
        if kind in ("random", "constant"):
            return "spam"
        if kind == "spam-writer":
            return "honest"
        if kind == "sly-writer":
            if stage in GOLD_STAGES or qualifying:
                return "honest"
            log.turned = True
            return "spam"
        if qualifying:
            return "honest"
        log.turned = True
        if kind in ("sly", "hit-and-run"):
            return "spam"
        # skipper, cherry-picker: the tells
        key = int(payload["question"]["id"]) if stage == "answers" else int(payload["screen"]["rico_id"])
        after = self.api.stages().get(stage)
        fired = []
        if key in log.seen:
            fired.append("repeat")
        if key < log.last_key:
            fired.append("order")
        fresh = before is not None and after is not None and before.get("open_assignment") is None
        if fresh and before is not None and after is not None and before["available"] - after["available"] != 1:
            fired.append("available")
        log.seen.add(key)
        log.suspects.append((payload["id"], tuple(fired)))
        if fired:
            return "skip" if kind == "skipper" else "honest"
        log.last_key = key
        return "spam"


# --- the run -------------------------------------------------------------------------------


@dataclass
class Crowd:
    project: Project
    lead: Any
    lead_api: Api
    workers: list[Worker]
    latencies: list[float]
    base_url: str


def crowd_create(
    *, project: Project, base_url: str, careful: int, seed: int, kinds: tuple[str, ...] = KINDS, cap: int = 0
) -> Crowd:
    """The lead and one worker of each of ``kinds`` (``careful`` careful ones), members with tokens."""
    user_model = get_user_model()
    latencies: list[float] = []

    def member(username: str, role: str = Role.ANNOTATOR) -> tuple[Any, str]:
        user, _ = user_model.objects.get_or_create(username=f"{project.slug}-{username}")
        Membership.objects.get_or_create(project=project, user=user, defaults={"role": role, "in_answer_pool": True})
        return user, Token.objects.get_or_create(user=user)[0].key

    lead, token = member("lead", Role.LEAD)
    workers = []
    names = [f"careful-{n}" for n in range(1, careful + 1)] + [k for k in kinds if k != "careful"]
    for name in names:
        kind = "careful" if name.startswith("careful") else name
        user, key = member(name, Role.REVIEWER if kind == "rubber-stamp" else Role.ANNOTATOR)
        api = Api(base_url=base_url, token=key, slug=project.slug, latencies=latencies)
        workers.append(Worker(name=name, kind=kind, user=user, api=api, seed=seed, cap=cap))
    lead_api = Api(base_url=base_url, token=token, slug=project.slug, latencies=[])
    return Crowd(project, lead, lead_api, workers, latencies, base_url)


def lead_makes_gold(crowd: Crowd, stage: str, *, seed: int, extra: int = 20) -> int:
    """The lead works ``qualification_items`` + ``extra`` of the stage's units (at most a third of
    those waiting) with the scripted truth and promotes each to gold over the API; and, as for gold
    reviews, goes on (up to half of those waiting) while the gold page warns that a constant answer
    would pass a qualification set (too few gold items of the other kinds: ``gold_balance``; at CI size
    a third of the screens can hold too few flagged ones). Returns how many."""
    api, project = crowd.lead_api, crowd.project
    truth = ScriptedAnnotator(username="lead-gold", seed=seed, profile=TRUTH)
    waiting = api.stages()[stage]["available"]
    made = worked = 0

    def warned() -> bool:
        return any(b.stage == stage and b.constant_passes for b in gold_balance(project=project))

    while worked < waiting // 2 and (worked < min(project.qualification_items + extra, waiting // 3) or warned()):
        worked += 1
        status, payload = api.next(stage)
        if status != 200:
            break
        backdate(payload["id"], 30.0)
        if api.submit(payload["id"], truth.work(payload)) != 200:
            raise RuntimeError(f"lead submit {stage}: {payload['id']}")
        if stage_get(stage).crowd_gold_fit(payload=payload):
            code, body = api.call(
                "POST", f"/api/projects/{project.slug}/quality/gold/promote/", {"assignment_id": payload["id"]}
            )
            if code != 201:
                raise RuntimeError(f"promote: HTTP {code} {body}")
            made += 1
    return made


def lead_makes_review_gold(crowd: Crowd, judge: Worker, *, extra: int = 10) -> int:
    """The lead reviews ``qualification_items`` + ``extra`` of the waiting review items (at most half of
    them) honestly (``judge`` lends its judgment, as in ``lead_reviews``) and makes each reviewed
    submission a gold review over the API, with the verdict the lead gave; and goes on while the gold
    page warns that accepting everything would pass a qualification set (too few known-bad gold reviews,
    ``pipeline.quality.gold.gold_balance``). Returns how many. Made before any reviewer of the crowd
    starts, so that the rubber stamp meets a qualification set of them (with known-bad submissions about
    half of the time, ``ReviewStage.gold_classes``)."""
    api, project = crowd.lead_api, crowd.project
    waiting = api.stages()["review"]["available"]
    made = 0

    def warned() -> bool:  # the gold page's warning: a reviewer who accepts everything would qualify
        project.refresh_from_db()
        return any(b.stage == "review" and b.constant_passes for b in gold_balance(project=project))

    while made < waiting // 2 and (made < project.qualification_items + extra or warned()):
        status, payload = api.next("review")
        if status != 200:
            break
        backdate(payload["id"], 20.0)
        if api.submit(payload["id"], judge.review_body(payload, honest=True)) != 200:
            raise RuntimeError(f"lead review: {payload['id']}")
        submission_id = Assignment.objects.values_list("reviewed_id", flat=True).get(pk=payload["id"])
        code, body = api.call(
            "POST", f"/api/projects/{project.slug}/quality/gold/review/", {"submission_id": submission_id}
        )
        if code != 201:
            raise RuntimeError(f"gold review: HTTP {code} {body}")
        made += 1
    return made


def crew(crowd: Crowd, stage: str) -> list[Worker]:
    if stage == "review":
        return [w for w in crowd.workers if w.kind == "rubber-stamp"]
    if stage in GOLD_STAGES:
        return [w for w in crowd.workers if w.kind in JUDGING]
    return [w for w in crowd.workers if w.kind in WRITING]


def lead_reviews(crowd: Crowd, reviewer: Worker) -> bool:
    """The lead reviews one item honestly (``reviewer`` lends its judgment); False when none waits."""
    status, payload = crowd.lead_api.next("review")
    if status != 200:
        return False
    backdate(payload["id"], 20.0)
    crowd.lead_api.submit(payload["id"], reviewer.review_body(payload, honest=True))
    return True


def crowd_work(
    crowd: Crowd,
    *,
    stages: tuple[str, ...],
    seed: int,
    gold: dict[str, int],
    gold_extra: int = 20,
    max_rounds: int = 20_000,
) -> int:
    """Every stage in order, round-robin in a seeded order, until a whole pass moves nothing.
    Returns the rounds run."""
    rng = random.Random(f"{seed}:rounds")
    slug = crowd.project.slug
    judge = next(w for w in crowd.workers if w.kind == "careful")
    rounds = 0
    moved = True
    while moved and rounds < max_rounds:
        moved = False
        for stage in stages:
            if stage == "not-answerable":
                crowd.lead_api.call("POST", f"/api/projects/{slug}/stages/not-answerable/start/")
            if stage in GOLD_STAGES and stage not in gold:
                gold[stage] = lead_makes_gold(crowd, stage, seed=seed, extra=gold_extra)
            if stage == "review" and not gold.get("review"):
                # (again on a later pass while too few items waited to make a qualification set)
                gold["review"] = lead_makes_review_gold(crowd, judge)
            team = crew(crowd, stage)
            while rounds < max_rounds:
                rounds += 1
                order = list(team)
                rng.shuffle(order)
                progress = False
                for worker in order:
                    if worker.step(stage) == "worked":
                        progress = moved = True
                if stage == "review" and rng.random() < 0.5 and lead_reviews(crowd, judge):
                    progress = moved = True
                if not progress:
                    break
            if stage == "review":  # the lead finishes what the rubber stamp left
                while lead_reviews(crowd, judge):
                    moved = True
    return rounds


def postprocess(crowd: Crowd, *, stages: tuple[str, ...], seed: int, gold: dict[str, int]) -> dict[str, Any]:
    """The lead starts post-processing; held-back work is redone by the crowd first (409), at most
    ``ATTEMPTS`` times. The job runs in this process when no worker takes it (the bench plays Celery)."""
    slug = crowd.project.slug
    held: list[Any] = []
    for _ in range(ATTEMPTS):
        status, body = crowd.lead_api.call("POST", f"/api/projects/{slug}/postprocess/")
        if status == 202:
            break
        if status != 409 or not {"held_back", "review_first"} & set(body or {}):
            raise RuntimeError(f"postprocess: HTTP {status} {body}")
        held.append(body.get("held_back") or {"review_first": body["review_first"]})
        crowd_work(crowd, stages=stages, seed=seed, gold=gold)
    else:
        return {"started": False, "held_back": held}
    job_id = body["id"]
    for poll in range(20):
        _, job = crowd.lead_api.call("GET", f"/api/release-jobs/{job_id}/")
        if job["status"] in ("done", "failed"):
            break
        if job["status"] == "queued" and poll > 3:
            job_run(kind="postprocess", job_id=job_id)
        time.sleep(0.25)
    return {"started": True, "held_back": held, "job_status": job["status"]}


# --- what happened -------------------------------------------------------------------------


def _percentiles(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)], 1)

    return {
        "n": len(values),
        "p50": pct(50),
        "p95": pct(95),
        "p99": pct(99),
        "mean": round(statistics.fmean(values), 1),
    }


def _leaks(
    project: Project, crowd: Crowd, spam_ids: dict[str, dict[str, list[int]]], *, wrong: set[int]
) -> list[dict[str, Any]]:
    """Why each spam item in the release was not held back: one row per item, with the worker's control
    items in the stage since it turned (passed, failed) before the item and after it, whether the item
    came after the worker's last passed control item, the standing's evidence at the end, and (answers)
    the question's split, (judgments) whether another judge of the screen judged alike, and whether
    the scripted truth calls it wrong."""
    rows: list[dict[str, Any]] = []
    for w in crowd.workers:
        for stage, ids in spam_ids.get(w.name, {}).items():
            if not ids or stage not in GOLD_STAGES:
                continue
            if stage == "answers":
                kept = Answer.objects.filter(assignment_id__in=ids, kept=True, question__state=QuestionState.KEPT)
                items = dict(kept.values_list("assignment_id", "question__screen__split"))
            else:
                counting = PrefilterJudgment.objects.filter(assignment_id__in=ids, withdrawn_reason="")
                items = dict.fromkeys(counting.values_list("assignment_id", flat=True), "")
            if not items:
                continue
            times = Assignment.objects.filter(pk__in=ids, submitted_at__isnull=False).values_list(
                "submitted_at", flat=True
            )
            turned = min(t for t in times if t is not None)
            controls = list(
                ControlResult.objects.filter(project=project, user=w.user, stage=stage, purpose=Purpose.CONTROL)
                .order_by("pk")
                .values_list("created_at", "correct")
            )
            passed = [at for at, ok in controls if ok]
            standing = Standing.objects.filter(project=project, user=w.user, stage=stage).first()
            for pk, at, screen_id, question_id, submission in Assignment.objects.filter(pk__in=list(items)).values_list(
                "pk", "submitted_at", "screen_id", "question_id", "submission"
            ):
                if at is None:  # (every counted item was submitted)
                    continue
                submission = submission or {}
                alike = None
                agreeing: list[str] = []
                if stage == "answers":
                    agreeing = _agreeing_authors(project, crowd, question_id=question_id, user_id=w.user.pk)
                # a redo of a unit another annotator's work was held back from (``_witnessed``)
                held_here = (
                    Answer.objects.filter(question_id=question_id)
                    if stage == "answers"
                    else PrefilterJudgment.objects.filter(screen_id=screen_id)
                ).filter(withdrawn_by__rule="provisional-held")
                if stage != "answers":
                    others = PrefilterJudgment.objects.filter(screen_id=screen_id, withdrawn_reason="").exclude(
                        assignment_id=pk
                    )
                    alike = any(
                        o.non_english_app == bool(submission.get("non_english_app"))
                        and o.vh_out_of_sync == bool(submission.get("vh_out_of_sync"))
                        for o in others
                    )
                rows.append(
                    {
                        "worker": w.name,
                        "stage": stage,
                        "wrong": pk in wrong,
                        "split": items[pk],
                        "controls_since_turning_before": [ok for c_at, ok in controls if turned <= c_at <= at],
                        "controls_after": [ok for c_at, ok in controls if c_at > at],
                        "after_last_passed_control": bool(passed) and at > passed[-1],
                        "evidence": round(standing.evidence, 2) if standing else None,
                        "judged_alike_by_another": alike,
                        "majority_with": agreeing,
                        "redo_of_held_work": held_here.exclude(assignment__annotator=w.user).exists(),
                        "status": standing.status if standing else None,
                    }
                )
    return rows


def _agreeing_authors(project: Project, crowd: Crowd, *, question_id: int, user_id: int) -> list[str]:
    """The other workers (their names; "lead" or "?" otherwise) whose answers are in the majority group
    of the question's kept answers together with ``user_id``'s, by the project's agreement rule: who
    corroborated a spam answer (empty when it is not in a majority group)."""
    from pipeline.decisions.decide import agreement_settings_for
    from pipeline.decisions.selectors import answer_records
    from pipeline.quality.consensus import majority_of

    records = answer_records([question_id]).get(question_id, [])
    group = majority_of([r.view for r in records], settings=agreement_settings_for(project))
    members = [records[i].annotator_id for i in sorted(group)]
    if user_id not in members:
        return []
    names = {w.user.pk: w.name for w in crowd.workers} | {crowd.lead.pk: "lead"}
    return [names.get(a, "?") for a in members if a != user_id]


def _stop(project: Project, user: Any, stage: str) -> QualityEvent | None:
    """The first decision that stopped ``user`` in ``stage`` (paused or not qualified), if any."""
    return (
        QualityEvent.objects.filter(
            project=project, user=user, stage=stage, status_after__in=("paused", "not_qualified")
        )
        .order_by("created_at", "pk")
        .first()
    )


def _stop_rule(project: Project, user: Any, stage: str) -> str:
    event = _stop(project, user, stage)
    return event.rule if event else ""


def figures(crowd: Crowd) -> dict[str, Any]:
    """The outcome, read from the database after the run."""
    project = crowd.project
    standings = {(s.user_id, s.stage): s.status for s in Standing.objects.filter(project=project)}
    spam_ids = {w.name: {st: list(log.spam) for st, log in w.logs.items()} for w in crowd.workers}
    wrong_spam = [i for w in crowd.workers for log in w.logs.values() for i in log.wrong]
    all_spam = [i for per in spam_ids.values() for ids in per.values() for i in ids]
    # careful workers
    careful = [w for w in crowd.workers if w.kind == "careful"]
    careful_rows: list[dict[str, Any]] = []
    for w in careful:
        for stage in GOLD_STAGES:
            log = w.logs.get(stage)
            if log is None or not log.items:
                continue
            careful_rows.append(
                {
                    "worker": w.name,
                    "stage": stage,
                    "items": log.items,
                    "status": standings.get((w.user.pk, stage), ""),
                    "stopped_by": _stop_rule(project, w.user, stage),
                }
            )
    careful_paused = [r for r in careful_rows if r["status"] in ("paused", "not_qualified")]

    # spammers: items after turning until stopped
    spammers = {}
    for w in crowd.workers:
        if w.kind not in SPAMMERS and w.kind not in (*WRITERS, "rubber-stamp"):
            continue
        per_stage = {}
        for stage, log in w.logs.items():
            if not log.items and not log.stopped:
                continue
            status = standings.get((w.user.pk, stage), "")
            stop = _stop(project, w.user, stage)
            # spam submitted before the decision that stopped it (a worker that left first learns of
            # it never); None: never stopped
            before_stop = (
                Assignment.objects.filter(pk__in=log.spam, updated_at__lte=stop.created_at).count()
                if stop is not None
                else None
            )
            per_stage[stage] = {
                "items": log.items,
                "honest": log.honest,
                "spam": len(log.spam),
                "skipped": len(log.skipped),
                "status": status,
                "stopped": status in ("paused", "not_qualified"),
                "stopped_by": stop.rule if stop else "",
                "spam_before_stopped": before_stop,
                "left": log.left,
            }
        spammers[w.name] = per_stage

    # the skippers' tells against the truth
    tells = {}
    for w in crowd.workers:
        if w.kind not in ("skipper", "cherry-picker"):
            continue
        leases = [s for log in w.logs.values() for s in log.suspects]
        purposes = dict(Assignment.objects.filter(pk__in=[a for a, _ in leases]).values_list("pk", "purpose"))
        control = {a: purposes.get(a) != Purpose.WORK for a, _ in leases}
        controls = sum(control.values())
        n = len(leases)

        def score(
            flagged: list[int], controls: int = controls, n: int = n, control: dict[int, bool] = control
        ) -> dict[str, Any]:
            hits = sum(1 for a in flagged if control[a])
            return {
                "flagged": len(flagged),
                "true_positives": hits,
                "precision": round(hits / len(flagged), 3) if flagged else None,
                "recall": round(hits / controls, 3) if controls else None,
                "chance_precision": round(controls / n, 3) if n else None,
                "chance_recall": round(len(flagged) / n, 3) if n else None,
            }

        tells[w.name] = {
            "leases_after_qualifying": n,
            "controls": controls,
            **score([a for a, fired in leases if fired]),
            "by_tell": {
                tell: score([a for a, fired in leases if tell in fired]) for tell in ("available", "order", "repeat")
            },
        }

    # spam in the release
    judgments = PrefilterJudgment.objects.filter(assignment_id__in=all_spam, withdrawn_reason="")
    counting = list(judgments.values_list("screen_id", "screen__state", "non_english_app", "screen__app_id"))
    rule_apps = set(
        App.objects.filter(project=project, non_english=True, language_set_by="rule").values_list("pk", flat=True)
    )
    spam_answers = Answer.objects.filter(
        assignment_id__in=all_spam, kept=True, question__state=QuestionState.KEPT
    ).count()
    spam_questions = Question.objects.filter(
        author__in=[w.user for w in crowd.workers if w.kind == "spam-writer"], state=QuestionState.KEPT
    ).count()
    # the sly writer's nonsense: the questions of the sets it wrote after turning
    sly_spam = [i for w in crowd.workers if w.kind == "sly-writer" for ids in spam_ids[w.name].values() for i in ids]
    sly_questions = Question.objects.filter(origin_id__in=sly_spam, state=QuestionState.KEPT).count()
    release: dict[str, Any] = {
        "prefilter_judgments_counting": len(counting),
        "screens_excluded_on_spam": len({s for s, state, _, _ in counting if state == ScreenState.EXCLUDED}),
        "screens_released_on_spam": len(
            {s for s, state, _, _ in counting if state not in (ScreenState.EXCLUDED, ScreenState.PREFILTER)}
        ),
        "apps_non_english_on_spam_votes": len({app for _, _, yes, app in counting if yes and app in rule_apps}),
        "questions_from_spam_writer": spam_questions,
        "questions_from_sly_writer": sly_questions,
        "answers": spam_answers,
        # of them, those the scripted truth disagrees with (a random judgment is right one time in four)
        "prefilter_judgments_counting_wrong": judgments.filter(assignment_id__in=wrong_spam).count(),
        "answers_wrong": Answer.objects.filter(
            assignment_id__in=wrong_spam, kept=True, question__state=QuestionState.KEPT
        ).count(),
    }
    by_worker: dict[str, dict[str, int]] = {}
    for w in crowd.workers:
        mine = [i for ids in spam_ids[w.name].values() for i in ids]
        if w.kind in WRITERS:
            kept = Question.objects.filter(author=w.user, state=QuestionState.KEPT)
            if w.kind == "sly-writer":
                kept = kept.filter(origin_id__in=mine)
            row = {stage: kept.filter(source=stage).count() for stage in WRITTEN}
        elif w.kind in SPAMMERS:
            row = {
                "prefilter_judgments": PrefilterJudgment.objects.filter(
                    assignment_id__in=mine, withdrawn_reason=""
                ).count(),
                "answers": Answer.objects.filter(
                    assignment_id__in=mine, kept=True, question__state=QuestionState.KEPT
                ).count(),
            }
        else:
            continue
        if any(row.values()):
            by_worker[w.name] = row
    release["by_worker"] = by_worker
    release["leaks"] = _leaks(project, crowd, spam_ids, wrong=set(wrong_spam))
    release["total"] = (
        release["prefilter_judgments_counting"]
        + release["questions_from_spam_writer"]
        + release["questions_from_sly_writer"]
        + release["answers"]
    )
    release["total_wrong"] = (
        release["prefilter_judgments_counting_wrong"]
        + release["questions_from_spam_writer"]
        + release["questions_from_sly_writer"]
        + release["answers_wrong"]
    )
    # What the release's own rules could not tell from good work is not the same harm as what they let
    # through alone: an item is corroborated when another judge judged the screen alike or its answer
    # is in the majority group of its question's answers (with careful answers, by the agreement rule).
    alone = [row for row in release["leaks"] if not row["majority_with"] and row["judged_alike_by_another"] is not True]
    release["uncorroborated"] = len(alone)
    release["uncorroborated_wrong_by_worker"] = dict(Counter(row["worker"] for row in alone if row["wrong"]))
    rubber = [w for w in crowd.workers if w.kind == "rubber-stamp"]
    reviews_standing = Assignment.objects.filter(
        project=project, stage="review", annotator__in=[w.user for w in rubber], status=AssignmentStatus.SUBMITTED
    )
    return {
        "careful": {
            "workers_x_stages": len(careful_rows),
            "paused": len(careful_paused),
            "share_paused": round(len(careful_paused) / len(careful_rows), 3) if careful_rows else None,
            "items_median": statistics.median([int(r["items"]) for r in careful_rows]) if careful_rows else 0,
            "paused_rows": careful_paused,
        },
        "spammers": spammers,
        "tells": tells,
        "spam_in_release": release,
        "rubber_stamp_reviews_submitted": reviews_standing.count(),
        # the gold reviews by verdict, and the verdicts of those the rubber stamp met (qualification, control)
        "review_gold": {
            "by_verdict": dict(
                Counter(
                    GoldItem.objects.filter(project=project, stage="review").values_list("answer__verdict", flat=True)
                )
            ),
            "rubber_stamp_met": {
                purpose: dict(
                    Counter(
                        ControlResult.objects.filter(
                            project=project, stage="review", user__in=[w.user for w in rubber], purpose=purpose
                        ).values_list("gold__answer__verdict", flat=True)
                    )
                )
                for purpose in (Purpose.QUALIFICATION, Purpose.CONTROL)
            },
        },
        "release_size": {
            "screens": Screen.objects.filter(project=project)
            .exclude(state__in=(ScreenState.EXCLUDED, ScreenState.PREFILTER))
            .count(),
            "questions_kept": Question.objects.filter(screen__project=project, state=QuestionState.KEPT).count(),
            "answers_kept": Answer.objects.filter(
                question__screen__project=project, kept=True, question__state=QuestionState.KEPT
            ).count(),
        },
        "next_ms": _percentiles(crowd.latencies),
    }


def adversarial_run(
    *,
    base_url: str,
    slug: str,
    size: Size,
    seed: int = 0,
    kinds: tuple[str, ...] = KINDS,
    stages: tuple[str, ...] = STAGE_ORDER,
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole run on a live server at ``base_url`` (sharing this process's database): the main
    project through ``stages`` (default every stage) to post-processing with one worker of each of
    ``kinds`` besides the careful ones, then the careful soak. ``settings``: project settings the lead
    sets first, over the settings API (for example ``{"provisional_work": "strict"}``; default: none).
    Returns ``figures``."""
    started = time.perf_counter()
    project = Project.objects.create(slug=slug, name=f"Adversarial crowd ({slug})", split_seed=f"adversary-{seed}")
    crowd_screens_create(project=project, count=size.screens, seed=seed)
    crowd = crowd_create(project=project, base_url=base_url, careful=size.careful, seed=seed, kinds=kinds)
    gold: dict[str, int] = {}
    try:
        if settings:
            status, body = crowd.lead_api.call("PATCH", f"/api/projects/{slug}/settings/", settings)
            if status != 200:
                raise RuntimeError(f"settings: HTTP {status} {body}")
        crowd_work(crowd, stages=stages, seed=seed, gold=gold)
        post = postprocess(crowd, stages=stages, seed=seed, gold=gold)
        out = figures(crowd)
    finally:
        for w in crowd.workers:
            w.api.close()
        crowd.lead_api.close()
    out.update({"gold": gold, "postprocess": post, "seconds": round(time.perf_counter() - started, 1)})
    project.refresh_from_db()
    out["settings"] = {name: getattr(project, name) for name in settings or {}}
    out["provisional_work"] = project.provisional_work
    # without post-processing there is no release: the figures are of the work as it stands
    out["spam_in_release"]["postprocessed"] = post["started"]
    if size.soak_careful:
        out["soak"] = careful_soak(base_url=base_url, slug=f"{slug}-soak", size=size, seed=seed)
    return out


def careful_soak(*, base_url: str, slug: str, size: Size, seed: int) -> dict[str, Any]:
    """``soak_careful`` careful workers, ``soak_items`` pre-filtering items each (3% slips), default
    settings: how many are stopped (``paused`` counts a failed qualification too; ``by_status`` tells
    them apart)."""
    started = time.perf_counter()
    project = Project.objects.create(slug=slug, name=f"Careful soak ({slug})", split_seed=f"soak-{seed}")
    # enough screens for every worker's items, the lead's gold and the qualification sets
    crowd_screens_create(
        project=project, count=size.soak_careful * size.soak_items + 3 * (size.soak_items // 3 + 10) + 30, seed=seed + 1
    )
    crowd = crowd_create(
        project=project,
        base_url=base_url,
        careful=size.soak_careful,
        seed=seed,
        kinds=("careful",),
        cap=size.soak_items,
    )
    try:
        crowd_work(crowd, stages=("prefilter",), seed=seed, gold={}, gold_extra=size.soak_items // 3)
        rows: list[dict[str, Any]] = []
        for w in crowd.workers:
            log = w.log("prefilter")
            rows.append(
                {
                    "items": log.items,
                    "status": Standing.objects.filter(project=project, user=w.user, stage="prefilter")
                    .values_list("status", flat=True)
                    .first(),
                    "control_items": Assignment.objects.filter(project=project, annotator=w.user)
                    .exclude(purpose=Purpose.WORK)
                    .count(),
                }
            )
    finally:
        for w in crowd.workers:
            w.api.close()
        crowd.lead_api.close()
    paused = sum(1 for r in rows if r["status"] in ("paused", "not_qualified"))
    return {
        "workers": len(rows),
        "by_status": dict(sorted(Counter(str(r["status"]) for r in rows).items())),
        "items_each": size.soak_items,
        "items_median": statistics.median(int(r["items"]) for r in rows) if rows else 0,
        "gold_items_median": statistics.median(int(r["control_items"]) for r in rows) if rows else 0,
        "paused": paused,
        "share_paused": round(paused / len(rows), 3) if rows else None,
        "next_ms": _percentiles(crowd.latencies),
        "seconds": round(time.perf_counter() - started, 1),
    }
