"""The figures and tables of the ScreenQA papers, computed for one project (docs/pipeline.md,
"Analysis the leads expect to see"; docs/analytics.md).

Every ``analytics_<what>(*, project)`` selector runs a fixed number of aggregate queries
(``Count`` with filters, grouped ``values().annotate()``), however large the
project is: Python only walks grouped rows (for the categories: one per distinct question text).
The question categories are regular expressions (``QUESTION_CATEGORIES``, applied by
``question_category``) run over the distinct question texts of one grouped query.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import connection
from django.db.models import (
    CharField,
    Count,
    Q,
    QuerySet,
    Value,
)
from django.db.models.functions import Coalesce, NullIf, Trim, TruncDate

from annotation.models import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    Project,
    Question,
    QuestionSource,
    QuestionState,
    Screen,
    ScreenState,
    Split,
    Stage,
    Verdict,
)
from pipeline.assist.report import model_and_crowd
from pipeline.stages.progress import ProjectProgress, project_progress

# Exclusion reasons written by pre-filtering (pipeline.stages.prefilter); repeated here as
# strings because analytics only reads them.
REASON_NON_ENGLISH = "non_english"
REASON_OUT_OF_SYNC = "vh_out_of_sync"

# The v1 paper's figures (section 5.2): shares of all answers.
PAPER_ELEMENT_SHARES = {"vh_only": 0.52, "drawn_only": 0.47, "mixed": 0.005}
# Boxes-per-answer histogram: 1..9 and a last "10+" bin.
BOXES_MAX_BIN = 10


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


# --- 1. stage funnel ------------------------------------------------------------------------


def analytics_funnel(*, project: Project) -> ProjectProgress:
    """The stage funnel: the project's progress (``pipeline.stages.progress``), two queries."""
    return project_progress(project=project)


# --- histograms -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Bin:
    label: str
    count: int
    share: float


@dataclass(frozen=True)
class Histogram:
    bins: list[Bin]
    total: int


def _histogram(counts: dict[int, int], *, first: int, last: int, open_last: bool) -> Histogram:
    """Bins ``first..last``; values above ``last`` fall into the last bin (labelled ``last+`` when open)."""
    binned = [0] * (last - first + 1)
    for value, n in counts.items():
        if value < first:
            continue
        binned[min(value, last) - first] += n
    total = sum(binned)
    bins = [
        Bin(
            label=f"{first + i}+" if open_last and first + i == last else str(first + i),
            count=n,
            share=_share(n, total),
        )
        for i, n in enumerate(binned)
    ]
    return Histogram(bins=bins, total=total)


def _grouped_counts(per_row: QuerySet[Any], columns: list[str]) -> list[tuple[Any, ...]]:
    """``(*columns, n)``: how many rows of ``per_row`` (a grouped ``values().annotate()``, one row per
    screen or answer) have each combination of ``columns``. One query: the per-row counts are grouped
    again in the database (``SELECT columns, COUNT(*) FROM (per_row) GROUP BY columns``), so neither a
    correlated count per outer row nor a row per answer in Python."""
    sql, params = per_row.query.sql_with_params()
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {names}, COUNT(*) FROM ({sql}) per_row GROUP BY {names}", params)  # noqa: S608
        return [tuple(row) for row in cursor.fetchall()]


def analytics_questions_per_screen(*, project: Project) -> Histogram:
    """Composed questions (passes 1 and 2) per screen, over screens past the question passes
    (questions final or closed without questions); bins ``0..cap1+cap2`` (paper: 0..8). One query:
    the questions counted per screen (a join, not a correlated count per screen), then grouped by
    that count in the database."""
    cap = project.questions_pass1_cap + project.questions_pass2_cap
    written = Q(questions__source__in=[QuestionSource.PASS_1, QuestionSource.PASS_2])
    per_screen = (
        Screen.objects.filter(project=project, state__in=[ScreenState.ANSWERING, ScreenState.NO_QUESTIONS])
        .order_by()
        .values("pk")
        .annotate(n=Count("questions", filter=written))
    )
    counts: dict[int, int] = dict(_grouped_counts(per_screen, ["n"]))  # type: ignore[arg-type]
    return _histogram(counts, first=0, last=cap, open_last=False)


# --- 3. and 4. answer elements ----------------------------------------------------------------


@dataclass(frozen=True)
class ElementShares:
    """Shares of ``answered`` answers whose boxes are all VH leaves, all drawn, or a mix."""

    vh_only: int
    drawn_only: int
    mixed: int
    total: int
    shares: dict[str, float]
    paper: dict[str, float] = field(default_factory=lambda: dict(PAPER_ELEMENT_SHARES))


@dataclass(frozen=True)
class AnswerElementsAnalytics:
    boxes_per_answer: Histogram
    sources: ElementShares


def analytics_answer_elements(*, project: Project) -> AnswerElementsAnalytics:
    """Boxes per ``answered`` answer (1..10+) and the VH-only / drawn-only / mixed shares, from one
    query: (VH leaves, drawn boxes) counted per answer, then grouped again in the database. Answers
    dropped by post-processing are left out; answers not yet post-processed count (``kept`` defaults to true)."""
    per_answer = (
        AnswerElement.objects.filter(
            answer__question__screen__project=project, answer__verdict=Verdict.ANSWERED, answer__kept=True
        )
        .order_by()
        .values("answer_id")
        .annotate(vh=Count("pk", filter=Q(vh_index__isnull=False)), drawn=Count("pk", filter=Q(vh_index__isnull=True)))
    )
    per_size: dict[int, int] = defaultdict(int)
    vh_only = drawn_only = mixed = 0
    for vh, drawn, answers in _grouped_counts(per_answer, ["vh", "drawn"]):
        per_size[vh + drawn] += answers
        if vh and drawn:
            mixed += answers
        elif vh:
            vh_only += answers
        elif drawn:
            drawn_only += answers
    total = vh_only + drawn_only + mixed
    return AnswerElementsAnalytics(
        boxes_per_answer=_histogram(per_size, first=1, last=BOXES_MAX_BIN, open_last=True),
        sources=ElementShares(
            vh_only=vh_only,
            drawn_only=drawn_only,
            mixed=mixed,
            total=total,
            shares={
                "vh_only": _share(vh_only, total),
                "drawn_only": _share(drawn_only, total),
                "mixed": _share(mixed, total),
            },
        ),
    )


# --- 5. question categories -----------------------------------------------------------------


@dataclass(frozen=True)
class Category:
    key: str
    label: str
    pattern: str  # case-insensitive; the first category whose pattern matches wins
    example: str  # a question of the paper's table 1 that falls in this category
    paper_share: float | None  # the category's share in the v1 paper's table 1


# Following the v1 paper's table 1; the order decides ties. The state of the UI comes first
# ("What is the status of "Email alerts"?", "Which date is selected?" and "Which tab am I on?" are
# UI selection & config, as the paper's "What is the selected ringtone?"), then enumerations ("What
# are the options to log in?"), then the app-level topics before the generic "which app" (app name),
# then specific before general ("email address" is an email, not an address; "how many stars" is
# stars, not a quantity). Every pattern matches whole words of the lowered text. On the release's
# 17,033 validation and test questions every category lands within 1.0 point of the paper's share
# (docs/analytics.md; tests/pipeline/analytics/test_categories_realdata.py).
QUESTION_CATEGORIES: tuple[Category, ...] = (
    Category("settings", "Settings", r"\bsettings?\b", "What is the setting of the alarm?", 0.007),
    Category(
        "ui-selection",
        "UI selection & config",
        r"\b(selected|chosen|checked|unchecked|ticked|enabled|disabled|activated|toggled|switched|turned on|turned off"
        r"|on or off|status|option|mode|tab|currently|highlighted|marked)\b",
        "Which option is selected?",
        0.181,
    ),
    Category(
        "options",
        "Enum. of avail. options",
        r"\b(options|choices|alternatives)\b|^(what|which) are (all )?(the )?(different|available|various)\b"
        r"|^(what|which) \w+ are (available|given|offered|provided|listed)\b",
        "What are the options available for logging in?",
        0.023,
    ),
    Category("email", "Email address", r"\be-?mails?\b", "What is customer service email?", 0.023),
    Category(
        "phone",
        "Phone number",
        r"\b(phone|telephone|(mobile|contact|cell|customer (service|care)) number|fax)\b",
        "What is the phone number?",
        0.010,
    ),
    Category(
        "website", "Website", r"\b(url|website|web site|web address|link)\b", "What's the website address?", 0.003
    ),
    Category("version", "Version information", r"\bversion\b", "What is the version number?", 0.015),
    Category(
        "signup",
        "Signup/login",
        r"\b(sign ?up|sign ?in|log ?in|register)\b",
        "Which application can be used to sign up / login?",
        0.017,
    ),
    Category("share", "Share/sharing", r"\bshar(e|ed|ing)\b", "Where can I share this application?", 0.009),
    Category("permission", "Permission", r"\bpermissions?\b", "Which application is asking for permissions?", 0.004),
    Category(
        "app-name",
        "App name",
        r"\b(app|application)('s)? name\b|\bname of (the |this )?(app|application)\b"
        r"|\b(which|what) (app|application)s?\b",
        "What is the name of the application?",
        0.110,
    ),
    Category("how-to", "How to", r"^how (to|do i|can i)\b", "How to start on boot?", 0.003),
    Category("unit", "Unit of measurement", r"\bunits?\b", "What is the unit of temperature?", 0.001),
    Category(
        "weather",
        "Weather",
        r"\b(weather|temperature|forecast|humidity|rain)\b",
        "What is the weather forecast for Sunday?",
        0.016,
    ),
    Category("stars", "# of stars", r"\bstars?\b|\brating\b", "What is the star rating?", 0.008),
    Category("likes", "# of likes", r"\blikes?\b", "How many likes does the post get?", 0.004),
    Category("reviews", "# of reviews", r"\b(reviews?|comments?)\b", "How many comments?", 0.004),
    Category("percentage", "Percentage", r"\bpercent(age)?\b|%", "What is the brightness percentage?", 0.008),
    Category("currency", "Currency", r"\bcurrency\b", "What is the currency for the price?", 0.003),
    Category(
        "price",
        "Price",
        r"\b(prices?|costs?|fees?|charges?|paid|pay|dollars?|euros?)\b|\$",
        "What is the price?",
        0.033,
    ),
    Category("duration", "Duration", r"\b(duration|how long)\b", "How long is the song?", 0.015),
    Category("age", "Age", r"\bhow old\b|\bage\b", "What is the age?", 0.007),
    Category("distance", "Distance", r"\b(distance|how far|miles?|km|kilometers?)\b", "How far is it?", 0.005),
    Category(
        "date-time",
        "Date/time",
        r"^when\b|\b(date|time|day|days|month|year|schedule|released|hour|hours|o'clock|today|tomorrow)\b",
        "When is happy hour?",
        0.104,
    ),
    Category(
        "quantity-number",
        "Quantity number",
        r"^how many\b|\bnumber of\b|\bcount\b",
        "How many unread messages?",
        0.112,
    ),
    Category("color", "Color", r"\bcolou?rs?\b", "What is the UI color?", 0.001),
    Category("quantity-amount", "Quantity amount", r"\bhow much\b|\bamount\b", "How much fat is there?", 0.011),
    Category("country", "Country", r"\bcountry\b", "What is the name of the country?", 0.005),
    Category(
        "address",
        "Address and direction",
        r"\b(address|location|located|where|zip|postal|city|street|directions?)\b",
        "What is the current location?",
        0.025,
    ),
    Category(
        "user-name",
        "User name",
        r"\buser ?name\b|\bname of the user\b|\b(profile|account) name\b",
        "What is the name of the user?",
        0.028,
    ),
    Category(
        "person-name",
        "Person's name",
        r"^who\b|\b(first|last|full|middle) name\b",
        "Who sang the song?",
        0.017,
    ),
    Category("name", "Name of item", r"\bnames?\b|\btitle\b", "What is the name of the drug?", 0.034),
    Category("gender", "Gender", r"\bgender\b", "What is the gender?", 0.003),
    Category(
        "language", "Language", r"\blanguages?\b", "Which language is being translated into which language?", 0.001
    ),
    Category("score", "Score & value", r"\b(score|points?|height|weight|value|level)\b", "What is the score?", 0.013),
    Category("yes-no", "Yes/No", r"^(is|are|does|do|can|has|have|was|were|will)\b", "Is there any favorite?", 0.010),
)
OTHER = Category("other", "Other", "", "What's the average speed?", 0.127)
# Patterns are lower case and texts are lowered once: a third faster than ``re.IGNORECASE``
# (bench_analytics: 86,000 distinct texts).
_COMPILED = tuple((c, re.compile(c.pattern)) for c in QUESTION_CATEGORIES)


def question_category(text: str) -> str:
    """The key of the first category whose pattern matches ``text`` (stripped, any case), else ``"other"``."""
    text = text.strip().lower()
    for category, regex in _COMPILED:
        if regex.search(text):
            return category.key
    return OTHER.key


@dataclass(frozen=True)
class CategoryRow:
    key: str
    label: str
    count: int
    share: float
    paper_share: float | None
    example: str


@dataclass(frozen=True)
class CategoryTable:
    rows: list[CategoryRow]  # by count, largest first; "other" last
    total: int


def analytics_question_categories(*, project: Project) -> CategoryTable:
    """Questions (all but those dropped by post-processing; their post-processed text when there is
    one) per category of ``QUESTION_CATEGORIES``.

    One grouped query counts the questions per distinct text; ``question_category`` sorts the
    distinct texts in Python. Not a ``CASE WHEN text ~* …`` in the database: PostgreSQL caches only
    32 compiled regular expressions per connection, and with more patterns than that every row
    recompiles all of them (measured: 45x slower; docs/analytics.md).
    """
    text = Trim(Coalesce(NullIf("final_text", Value("")), "text", output_field=CharField()))
    rows = (
        Question.objects.filter(screen__project=project)
        .exclude(state=QuestionState.DROPPED)
        .annotate(qtext=text)
        .order_by()
        .values_list("qtext")
        .annotate(n=Count("pk"))
    )
    counts: dict[str, int] = defaultdict(int)
    for qtext, n in rows.iterator(chunk_size=5000):
        counts[question_category(qtext)] += n
    total = sum(counts.values())
    order = sorted(QUESTION_CATEGORIES, key=lambda c: (-counts.get(c.key, 0), c.label))
    return CategoryTable(
        rows=[
            CategoryRow(
                key=c.key,
                label=c.label,
                count=counts.get(c.key, 0),
                share=_share(counts.get(c.key, 0), total),
                paper_share=c.paper_share,
                example=c.example,
            )
            for c in (*order, OTHER)
        ],
        total=total,
    )


# --- 6. agreement ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AgreementShares:
    """Post-processed validation/test questions by how many of their answers agree."""

    all: int
    two: int
    none: int
    total: int
    shares: dict[str, float]


def analytics_agreement(*, project: Project) -> AgreementShares:
    """From ``Question.agreement`` of validation/test questions that post-processing labelled. One query."""
    row = Question.objects.filter(screen__project=project, screen__split__in=[Split.VALIDATION, Split.TEST]).aggregate(
        all=Count("pk", filter=Q(agreement="all")),
        two=Count("pk", filter=Q(agreement="two")),
        none=Count("pk", filter=Q(agreement="none")),
    )
    total = row["all"] + row["two"] + row["none"]
    return AgreementShares(
        all=row["all"],
        two=row["two"],
        none=row["none"],
        total=total,
        shares={k: _share(row[k], total) for k in ("all", "two", "none")},
    )


# --- 7. per-annotator activity --------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorDay:
    day: date
    submissions: int
    answers_judged: int  # answers of post-processed questions
    answers_kept: int

    @property
    def kept_share(self) -> float | None:
        return _share(self.answers_kept, self.answers_judged) if self.answers_judged else None


@dataclass(frozen=True)
class AnnotatorActivity:
    username: str
    submitted: dict[str, int]  # per stage
    skips: int
    answers_judged: int
    answers_kept: int
    days: list[AnnotatorDay]

    @property
    def submissions(self) -> int:
        return sum(self.submitted.values())

    @property
    def kept_share(self) -> float | None:
        return _share(self.answers_kept, self.answers_judged) if self.answers_judged else None


_JUDGED = [QuestionState.KEPT, QuestionState.DROPPED]


def analytics_annotators(*, project: Project) -> list[AnnotatorActivity]:
    """Per annotator: submissions per stage, skips, and the share of their answers (to questions
    post-processing has decided) that it kept; per day as well. Two grouped queries; annotators by
    name."""
    work = (
        Assignment.objects.filter(project=project, status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED])
        .annotate(day=TruncDate(Coalesce("submitted_at", "updated_at")))
        .order_by()
        .values("annotator__username", "stage", "status", "day")
        .annotate(n=Count("pk"))
    )
    judged = (
        Answer.objects.filter(question__screen__project=project, question__state__in=_JUDGED, annotator__isnull=False)
        .annotate(day=TruncDate("created_at"))
        .order_by()
        .values("annotator__username", "day")
        .annotate(n=Count("pk"), kept_n=Count("pk", filter=Q(kept=True)))
    )
    submitted: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(Stage.values, 0))
    skips: dict[str, int] = defaultdict(int)
    per_day: dict[str, dict[date, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    for r in work:
        name = r["annotator__username"]
        if r["status"] == AssignmentStatus.SKIPPED:
            skips[name] += r["n"]
        else:
            submitted[name][r["stage"]] += r["n"]
            per_day[name][r["day"]][0] += r["n"]
    for j in judged:
        name = j["annotator__username"]
        per_day[name][j["day"]][1] += j["n"]
        per_day[name][j["day"]][2] += j["kept_n"]
    names = sorted(set(submitted) | set(skips) | set(per_day))
    result = []
    for name in names:
        days = [
            AnnotatorDay(day=d, submissions=v[0], answers_judged=v[1], answers_kept=v[2])
            for d, v in sorted(per_day[name].items())
        ]
        result.append(
            AnnotatorActivity(
                username=name,
                submitted=dict(submitted[name]),
                skips=skips[name],
                answers_judged=sum(d.answers_judged for d in days),
                answers_kept=sum(d.answers_kept for d in days),
                days=days,
            )
        )
    return result


# --- everything -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectAnalytics:
    funnel: ProjectProgress
    questions_per_screen: Histogram
    answer_elements: AnswerElementsAnalytics
    categories: CategoryTable
    agreement: AgreementShares
    annotators: list[AnnotatorActivity]
    # The model against the crowd (``pipeline.assist.report.model_and_crowd``) when the project has a
    # suggestion backend; None otherwise (and in a snapshot stored before this field existed).
    model: dict[str, Any] | None = None


def analytics_project(*, project: Project) -> ProjectAnalytics:
    """Every figure of the analysis page: eight queries whatever the project's size, four more with a
    suggestion backend."""
    return ProjectAnalytics(
        funnel=analytics_funnel(project=project),
        questions_per_screen=analytics_questions_per_screen(project=project),
        answer_elements=analytics_answer_elements(project=project),
        categories=analytics_question_categories(project=project),
        agreement=analytics_agreement(project=project),
        annotators=analytics_annotators(project=project),
        model=model_and_crowd(project=project) if project.assist_url else None,
    )
