"""A crowd you can run: scripted annotators that drive a project through every stage until it
is ready for post-processing (members are created with ``annotation.services.members``).

The scripted annotators behave like a plausible crowd, deterministically from a seed:

* pre-filtering: an app is non-English for ~17% of packages (the paper: 11k of 66k
  screens), a screen's VH is out of sync for ~20% of the rest (13k of 55k); each judge
  disagrees with that truth at their profile's ``noise``;
* questions: built from the screen's candidate texts (``What does "Sign in" say?``),
  0-5 in pass 1 and 0-3 in pass 2, never repeating a question of the screen;
* not-answerable: a plausible question about something the screen does not show;
* answers: find the quoted text among the candidates, then select the candidate (half the
  time) or draw a box around it (the other half), sometimes add a neighbour; questions
  that quote nothing are marked not answerable; a few are marked invalid or not answerable
  by mistake (the profile's ``invalid``, ``unanswerable``); ~20% of questions (the same
  for every answerer) need an edit, which careful answerers make 90% of the time
  (``pipeline.stages.answers.crowd_question_edit``: a contraction expanded, a missing question
  mark, a capital, else a rewording outside the quoted text), so post-processing's majority edit
  changes about a fifth of the released questions. About 15% of questions are about two
  elements read together (the quoted one and the next text on the screen, like "C Max" and
  "2014"): each answerer includes the second one 70% of the time, so answers whose elements
  are a subset of another's are common, as in the release. A profile's ``wrong_element`` of
  answers select the wrong element.
* writing rules: a profile's ``rule_breaking`` share of the questions it writes breaks a writing
  rule (counting, arithmetic, comparison, an ad, yes/no: ``RULE_BREAKING_TEMPLATES`` of
  ``pipeline.stages.questions``); a pass-2 writer flags each pass-1 question that breaks one
  ``flagging`` of the time, seeing it with the writing hints' rules (``frontend.hints``: the
  rules a writer is shown while typing), so careless writers' questions count against them in
  quality control (``pipeline.quality.writers``).

Annotators come in profiles (``PROFILES``: careful, careless, spammer, in configurable shares):
how often a judgment is wrong, how often an answer picks another element, how long an item
takes (the simulation backdates each lease by that time, so the fast-response rule sees it);
a spammer answers at random, fast. An annotator that quality control pauses (or does not
qualify) in a stage stops getting work there, as in a real crowd.

``crowd_simulate`` talks to the engine through the services (fast, default) or over HTTP
(``EngineHttpClient``, token auth, keep-alive), the same calls a crowd platform makes.
"""

from __future__ import annotations

import http.client
import json
import random
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.exceptions import ApplicationError, PermissionDeniedError
from annotation.models import Assignment, AssignmentStatus, Membership, Project, Purpose, Role, Screen
from frontend.hints import question_hints
from pipeline.engine import (
    assignment_next_by_slug,
    assignment_skip,
    assignment_submit,
    project_progress,
    stage_get,
    stages,
    work_payload,
)
from pipeline.ingest import import_screens
from pipeline.quality.gold import gold_promote

from .demo.generator import plan, render_screen

# --- screens -------------------------------------------------------------------------------


def crowd_screens_create(*, project: Project, count: int, seed: int = 0, apps: int = 0) -> int:
    """Add ``count`` screens drawn by the demo generator (``devtools.demo.generator``), spread
    over ``apps`` apps (default one per 8 screens), and import them with the real importer.

    RICO ids continue after the project's largest numeric one. Returns how many were imported.
    """
    apps = apps or max(1, count // 8)
    existing = [int(r) for r in Screen.objects.filter(project=project).values_list("rico_id", flat=True) if r.isdigit()]
    start = max(existing, default=900_000) + 1
    with tempfile.TemporaryDirectory(prefix="crowd-screens-") as tmp:
        folder = Path(tmp)
        for i, (rico_id, kind, size) in enumerate(plan(count=count, start_id=start)):
            screen = render_screen(
                rico_id=rico_id, kind=kind, size=size, seed=seed, package=f"com.crowd.demo{(i * 7919) % apps}"
            )
            (folder / f"{rico_id}.jpg").write_bytes(screen.image)
            (folder / f"{rico_id}.json").write_bytes(screen.vh_bytes())
        summary = import_screens(project=project, source=folder)
    return len(summary.imported)


# --- scripted annotators ----------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """How a scripted annotator works: ``noise``, the share of wrong judgments; ``wrong_element``,
    the share of answers on another element than the one asked about; ``invalid`` and
    ``unanswerable``, the shares of questions marked invalid / not answerable by mistake;
    ``extra``, the share of answers with a neighbour added; ``pair``, how often the text read
    together with the quoted one is included; ``seconds``, the range of time per item; ``spam``:
    answers at random; ``rule_breaking``, the share of questions written that break a writing rule;
    ``flagging``, the share of rule-breaking pass-1 questions a pass-2 writer flags."""

    name: str
    noise: float
    wrong_element: float
    seconds: tuple[float, float]
    spam: bool = False
    invalid: float = 0.03
    unanswerable: float = 0.02
    extra: float = 0.1
    pair: float = 0.7
    rule_breaking: float = 0.0
    flagging: float = 1.0
    accepts_suggestions: float = 0.0  # the share of shown suggestions submitted unchanged, unchecked


# Calibrated for quality control with the project's defaults (docs/quality.md). Monitoring pauses
# at the first wrong control item among an annotator's first 19 (one wrong of fewer than 20 is
# under 95%), so a careful annotator's item is wrong ~0.25% of the time (pre-filtering: two
# judgments at 0.12% each; answers: invalid, not answerable, another element at 0.1%, 0.1%,
# 0.05%): P(a wrong one among 19) ~ 5%. Three careful answers still disagree on ~2% of questions
# (the paper: 97.9% all agree) because 3% of questions read two ways (``AMBIGUOUS_SHARE``),
# which a lead does not make gold. A careless annotator errs ~15-25% (fails the qualification or
# is paused soon); a spammer answers at random, fast.
PROFILES = {
    "careful": Profile(
        "careful", noise=0.0012, wrong_element=0.0005, seconds=(6.0, 30.0), invalid=0.001, unanswerable=0.001
    ),
    "careless": Profile(
        "careless", noise=0.12, wrong_element=0.10, seconds=(3.0, 12.0), rule_breaking=0.15, flagging=0.5
    ),
    "spammer": Profile(
        "spammer", noise=0.5, wrong_element=1.0, seconds=(0.5, 4.0), spam=True, rule_breaking=0.5, flagging=0.0
    ),
    # Careful without a suggestion; with one, submits it unchanged without looking (docs/assist.md).
    "stamper": Profile(
        "stamper",
        noise=0.0012,
        wrong_element=0.0005,
        seconds=(1.0, 4.0),
        invalid=0.001,
        unanswerable=0.001,
        accepts_suggestions=1.0,
    ),
}
# The lead making gold: the scripted truth, no slips.
TRUTH = Profile("truth", noise=0.0, wrong_element=0.0, seconds=(20.0, 40.0), invalid=0.0, unanswerable=0.0, extra=0.0)
DEFAULT_SHARES = {"careful": 1.0}


def profiles_assign(*, count: int, shares: dict[str, float], seed: int) -> list[Profile]:
    """``count`` profiles in the given shares (largest remainder), in a seeded order."""
    unknown = set(shares) - set(PROFILES)
    if unknown or not shares or any(v < 0 for v in shares.values()) or sum(shares.values()) <= 0:
        raise ApplicationError(f"Profile shares name {', '.join(PROFILES)} with shares >= 0.", field="profiles")
    total = sum(shares.values())
    exact = {name: count * share / total for name, share in shares.items()}
    counts = {name: int(v) for name, v in exact.items()}
    for name in sorted(exact, key=lambda n: exact[n] - counts[n], reverse=True)[: count - sum(counts.values())]:
        counts[name] += 1
    out = [PROFILES[name] for name in sorted(counts) for _ in range(counts[name])]
    random.Random(f"profiles:{seed}").shuffle(out)
    return out


@dataclass
class ScriptedAnnotator:
    """One scripted annotator: a seeded random stream and a profile. What it submits in a stage is
    the stage's own ``crowd_submission`` (``pipeline.stages``), which reads ``noise``,
    ``wrong_element``, ``spam``, ``rule_breaking``, ``flagging`` and calls ``rule_broken``."""

    username: str
    seed: int
    profile: Profile = PROFILES["careful"]
    review_rejects: float = 0.05  # a reviewer's share of rejections (``pipeline.stages.review``)
    noise: float = field(init=False)
    wrong_element: float = field(init=False)
    spam: bool = field(init=False)
    invalid: float = field(init=False)
    unanswerable: float = field(init=False)
    extra: float = field(init=False)
    pair: float = field(init=False)
    rule_breaking: float = field(init=False)
    flagging: float = field(init=False)
    accepts_suggestions: float = field(init=False)
    rng: random.Random = field(init=False)
    rules_rng: random.Random = field(init=False)  # breaking and flagging writing rules, a stream apart

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.seed}:{self.username}")
        self.rules_rng = random.Random(f"{self.seed}:{self.username}:rules")
        p = self.profile
        self.noise, self.wrong_element, self.spam = p.noise, p.wrong_element, p.spam
        self.invalid, self.unanswerable, self.extra, self.pair = p.invalid, p.unanswerable, p.extra, p.pair
        self.rule_breaking, self.flagging = p.rule_breaking, p.flagging
        self.accepts_suggestions = p.accepts_suggestions

    @staticmethod
    def rule_broken(text: str) -> str | None:
        """The writing rule ``text`` breaks as the writing hints see it (``frontend.hints``, whose
        kinds are the questions stage's ``review_reasons`` codes), None when none; near
        duplicates are not looked for."""
        return next((hint.kind for hint in question_hints(text, others=[])), None)

    def seconds(self) -> float:
        low, high = self.profile.seconds
        return self.rng.uniform(low, high)

    def noisy(self, truth: bool) -> bool:
        """A judgment that is wrong ``noise`` of the time."""
        return (not truth) if self.rng.random() < self.noise else truth

    def work(self, payload: dict[str, Any]) -> dict[str, Any]:
        return stage_get(payload["stage"]).crowd_submission(payload=payload, actor=self)


def took(assignment_id: int, seconds: float) -> None:
    """Make a lease look ``seconds`` old (simulated work time, as the quality rules see it), but
    never so old that the unit would seem held by more leases at once than it takes (the
    earliest start at which it still fits)."""
    lease = Assignment.objects.select_related("question", "project").get(pk=assignment_id)
    if lease.purpose != Purpose.WORK:  # a gold item is served to many: nothing to fit
        Assignment.objects.filter(pk=assignment_id).update(created_at=lease.created_at - timedelta(seconds=seconds))
        return
    stage = stage_get(lease.stage)
    needed = lease.question.answers_needed if lease.question is not None else 1
    capacity = stage.capacity(project=lease.project, unit_answers_needed=needed)
    spans = [
        (start, min(updated, expires) if status not in (AssignmentStatus.LEASED, AssignmentStatus.EXPIRED) else expires)
        for start, updated, expires, status in Assignment.objects.filter(
            stage=lease.stage, screen=lease.screen_id, question=lease.question_id, reviewed=lease.reviewed_id
        )
        .filter(purpose=Purpose.WORK)
        .exclude(pk=lease.pk)
        .values_list("created_at", "updated_at", "lease_expires_at", "status")
    ]
    created = lease.created_at

    def fits(begin: Any) -> bool:
        points = [begin] + [s for s, _ in spans if begin < s <= created]
        return all(sum(1 for s, e in spans if s <= t < e) < capacity for t in points)

    wanted = created - timedelta(seconds=seconds)
    later_ends = sorted(e for _, e in spans if wanted < e <= created)
    start = next((c for c in [wanted, *later_ends] if fits(c)), created)
    Assignment.objects.filter(pk=assignment_id).update(created_at=start)


# --- engine access: services or HTTP ------------------------------------------------------


class EngineServiceClient:
    """The engine through its services (in-process)."""

    def __init__(self, *, project: Project) -> None:
        self.project = project

    def next(self, user: Any, stage: str) -> dict[str, Any] | None:
        """The next item, ``None`` when there is none; ``Refused`` when the engine says why not
        (not a reviewer, paused, not qualified)."""
        try:
            work = assignment_next_by_slug(slug=self.project.slug, user=user, stage=stage)
        except PermissionDeniedError as exc:
            raise Refused(str(exc), waiting=bool(exc.extra.get("waiting_for"))) from exc
        return None if work is None else work_payload(work=work)

    def submit(self, user: Any, assignment_id: int, body: dict[str, Any]) -> None:
        assignment_submit(assignment_id=assignment_id, user=user, data=body)

    def skip(self, user: Any, assignment_id: int, reason: str) -> None:
        assignment_skip(assignment_id=assignment_id, user=user, reason=reason)


class Refused(Exception):
    """The engine gives this annotator no work in the stage, and says why (HTTP 403). ``waiting``:
    for now only (a writer qualifying by review whose first sets wait for it)."""

    def __init__(self, message: str, *, waiting: bool = False) -> None:
        super().__init__(message)
        self.waiting = waiting


class EngineHttpError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:300]}")
        self.status = status


class EngineHttpConnection:
    """One annotator's keep-alive connection to the engine API (token auth)."""

    def __init__(self, base_url: str, token: str, timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ApplicationError("The URL must look like http://host:port.", field="http")
        conn_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.conn = conn_class(parts.hostname, parts.port, timeout=timeout)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        payload = None if body is None else json.dumps(body)
        for attempt in range(2):  # one reconnect if the server closed the keep-alive connection
            try:
                self.conn.request(method, path, body=payload, headers=self.headers)
                response = self.conn.getresponse()
                raw = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                if attempt:
                    raise
        data = json.loads(raw) if raw else None
        return response.status, data

    def close(self) -> None:
        self.conn.close()


class EngineHttpClient:
    """The engine over HTTP: what a crowd platform or a script does."""

    def __init__(self, *, project: Project, base_url: str, tokens: dict[str, str]) -> None:
        self.slug = project.slug
        self.conns = {username: EngineHttpConnection(base_url, token) for username, token in tokens.items()}

    def next(self, user: Any, stage: str) -> dict[str, Any] | None:
        status, data = self.conns[user.username].call("POST", f"/api/projects/{self.slug}/stages/{stage}/next/")
        if status == 204:
            return None
        if status == 403:
            raise Refused(json.dumps(data), waiting=bool((data or {}).get("waiting_for")))
        if status != 200:
            raise EngineHttpError(status, json.dumps(data))
        return dict(data)

    def submit(self, user: Any, assignment_id: int, body: dict[str, Any]) -> None:
        status, data = self.conns[user.username].call("POST", f"/api/assignments/{assignment_id}/submit/", body)
        if status != 200:
            raise EngineHttpError(status, json.dumps(data))

    def skip(self, user: Any, assignment_id: int, reason: str) -> None:
        status, data = self.conns[user.username].call(
            "POST", f"/api/assignments/{assignment_id}/skip/", {"reason": reason}
        )
        if status != 200:
            raise EngineHttpError(status, json.dumps(data))

    def close(self) -> None:
        for conn in self.conns.values():
            conn.close()


# --- the simulation ----------------------------------------------------------------------


def _crowd_users(*, project: Project, annotators: int) -> tuple[list[Any], Any]:
    """The simulation's annotators (all in the answer pool) and a lead, created on first use."""
    user_model = get_user_model()
    users = []
    for n in range(1, annotators + 1):
        user, _ = user_model.objects.get_or_create(username=f"{project.slug}-crowd-{n}")
        Membership.objects.get_or_create(project=project, user=user, defaults={"in_answer_pool": True})
        users.append(user)
    lead, _ = user_model.objects.get_or_create(username=f"{project.slug}-crowd-lead")
    Membership.objects.get_or_create(project=project, user=lead, defaults={"role": Role.LEAD})
    return users, lead


def _lead_makes_gold(
    *, client: EngineServiceClient | EngineHttpClient, project: Project, stage: Any, lead: Any, truth: ScriptedAnnotator
) -> int:
    """The lead works some of ``stage``'s waiting units with the scripted truth and promotes each
    submission to gold (``pipeline.quality.gold.gold_promote``). Returns how many."""
    waiting = stage.available_count(project=project, user=lead, now=timezone.now())
    made = 0
    for _ in range(min(project.qualification_items + 20, waiting // 3)):
        payload = client.next(lead, stage.name)
        if payload is None:
            break
        client.submit(lead, payload["id"], truth.work(payload))
        if stage.crowd_gold_fit(payload=payload):
            gold_promote(project=project, assignment_id=payload["id"], user=lead)
            made += 1
    return made


def crowd_simulate(
    *,
    project: Project,
    annotators: int,
    seed: int = 0,
    http_url: str | None = None,
    new_screens: int = 0,
    max_rounds: int = 100_000,
    profiles: dict[str, float] | None = None,
    qc: bool = False,
    review_rejects: float = 0.05,
) -> dict[str, Any]:
    """Drive the project through every stage with scripted annotators until it is ready
    for post-processing (or no annotator can do anything more).

    Stages run in pipeline order; within a stage the crowd works round-robin in a seeded
    order. The lead's step (starting the not-answerable stage with its default sample)
    happens once the question passes are done. Returns a summary with the submissions per
    stage, the skips, the final ``project_progress`` and the elapsed seconds.
    ``new_screens`` first adds that many synthetic screens (``crowd_screens_create``);
    ``profiles``: the shares of each profile (default all careful). The lead does the reviews,
    rejecting ``review_rejects`` of them at random (the scripted writers write alike in every
    profile, so a review's verdict says nothing of the writer).
    An annotator the engine refuses in a stage (paused, not qualified) stops there; the summary
    lists them (``refused``).

    ``qc``: the lead makes gold before the crowd starts on a stage with gold items
    (``lead_gold``): they work ``qualification_items`` + 20 of the stage's units (at most a third of
    those waiting) with the scripted truth and promote each submission to gold: pre-filtering
    judgments on screens, answers on questions once the questions exist. The crowd then
    qualifies on them and meets them as control items.
    """
    if annotators < 2:
        raise ApplicationError("Two question passes need at least two annotators.", field="annotators")
    if new_screens:
        crowd_screens_create(project=project, count=new_screens, seed=seed)
    users, lead = _crowd_users(project=project, annotators=annotators)
    # Seeded by position in the crowd, not by username: the same seed gives the same crowd in any project.
    crowd_profiles = profiles_assign(count=len(users), shares=profiles or DEFAULT_SHARES, seed=seed)
    scripts = {
        u.pk: ScriptedAnnotator(username=f"crowd-{i}", seed=seed, profile=crowd_profiles[i])
        for i, u in enumerate(users)
    }
    scripts[lead.pk] = ScriptedAnnotator(username="crowd-lead", seed=seed, review_rejects=review_rejects)
    truth = ScriptedAnnotator(username="crowd-lead-gold", seed=seed, profile=TRUTH)
    if qc:  # the lead answers questions to make answers gold
        Membership.objects.filter(project=project, user=lead).update(in_answer_pool=True)
    lead_gold: dict[str, int] = {}
    refused: dict[str, dict[str, str]] = {}
    rng = random.Random(seed)
    client: EngineServiceClient | EngineHttpClient
    if http_url:
        tokens = {u.username: Token.objects.get_or_create(user=u)[0].key for u in [*users, lead]}
        client = EngineHttpClient(project=project, base_url=http_url, tokens=tokens)
    else:
        client = EngineServiceClient(project=project)
    submitted: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    lead_steps: dict[str, Any] = {}
    started = time.perf_counter()
    rounds = 0
    try:
        # Stages in pipeline order, again until a whole pass changes nothing (a lead's step, such
        # as starting the not-answerable sample, can give earlier stages new work).
        moved = True
        while moved and rounds < max_rounds:
            moved = False
            for name, stage in stages().items():
                step = stage.crowd_lead_step(project=project)
                if step is not None:
                    lead_steps.setdefault(name, step)
                if qc and stage.has_gold and not lead_gold.get(name):
                    lead_gold[name] = _lead_makes_gold(
                        client=client, project=project, stage=stage, lead=lead, truth=truth
                    )
                crew = [lead] if stage.reviewing else users
                while rounds < max_rounds:
                    rounds += 1
                    order = [u for u in crew if u.username not in refused.get(name, {})]
                    rng.shuffle(order)
                    progress = False
                    for user in order:
                        try:
                            payload = client.next(user, name)
                        except Refused as exc:
                            if exc.waiting:  # back once the review stage has had its turn
                                continue
                            refused.setdefault(name, {})[user.username] = str(exc)
                            continue
                        if payload is None:
                            continue
                        progress = moved = True
                        script = scripts[user.pk]
                        # A few skips where others can pick the work up.
                        if stage.crowd_skips and annotators >= 4 and script.rng.random() < 0.02:
                            client.skip(user, payload["id"], "screen hard to read")
                            skipped[name] += 1
                            continue
                        took(payload["id"], script.seconds())
                        client.submit(user, payload["id"], script.work(payload))
                        submitted[name] += 1
                    if not progress:
                        break
    finally:
        if isinstance(client, EngineHttpClient):
            client.close()
    return {
        "project": project.slug,
        "annotators": annotators,
        "seed": seed,
        "via": "http" if http_url else "services",
        "submitted": dict(submitted),
        "skipped": dict(skipped),
        "profiles": {u.username: scripts[u.pk].profile.name for u in users},
        "refused": refused,
        "lead_steps": lead_steps,
        "lead_gold": lead_gold,
        "progress": project_progress(project=project).as_api(),
        "seconds": round(time.perf_counter() - started, 2),
        "lead": lead.username,
    }
