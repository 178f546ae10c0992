"""Accessibility (issue 22 §13): axe-core, run in Chromium on every page of our own UI, finds no
critical and no serious violation. axe-core comes from PyPI (``axe-playwright-python`` ships
``axe.min.js``; requirements-dev.txt) and is injected through the DevTools protocol, which the
pages' Content-Security-Policy does not govern: nothing is fetched at test time. Swagger UI
(``/api/docs/``) is a third party's page and is not audited here.

Also the layout faults found with it: the funnel's labels fit at 1366 px, the workspace does not
overflow sideways at phone width (390 px), removing a member asks for confirmation, and a
project's first export is its export #1.
"""

from __future__ import annotations

import importlib.resources
from typing import Any

import pytest

from annotation.models import QuestionState, ScreenState
from devtools.crowd import crowd_simulate
from pipeline.jobs.runner import job_run_now
from tests.browser.conftest import add_question, generated_screens
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

axe_package = pytest.importorskip("axe_playwright_python", reason="axe-core comes with axe-playwright-python")
AXE_SOURCE = (importlib.resources.files(axe_package) / "axe.min.js").read_text(encoding="utf-8")
BLOCKING = ("critical", "serious")
# The elements that stick out to the right of the viewport (the page scrolls sideways), if any.
OVERFLOW = """() => document.documentElement.scrollWidth <= window.innerWidth ? [] :
  [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
    .slice(0, 8).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + [...e.classList].join('.')
                       + ' ' + Math.round(e.getBoundingClientRect().right))"""


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's critical and serious violations on the page as it is now (WCAG 2.x A and AA rules,
    best practices), each as ``{"id", "impact", "help", "nodes": [selectors]}``."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_SOURCE)
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [", ".join(map(str, n["target"])) for n in v["nodes"]][:5],
        }
        for v in result["violations"]
        if v["impact"] in BLOCKING
    ]


def _open_stage(page: Any, slug: str, stage: str) -> bool:
    """Open the next item of ``stage`` as an annotator does; False when nothing waits."""
    page.goto(f"/projects/{slug}/work/{stage}/next/")
    if page.locator("[data-testid=open-next-page]").count():
        with page.expect_navigation():
            page.click("[data-testid=open-next]")
    page.locator("#ws[data-ready]").or_(page.get_by_text("nothing for you right now")).first.wait_for()
    return page.locator("#ws[data-ready]").count() > 0


@pytest.fixture
def worked_project() -> dict[str, Any]:
    """A project a scripted crowd worked through with quality control, post-processed, with its
    short answers and an export; a site admin who leads it; and a second project with one item
    waiting in each annotator stage for ``ann``."""
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    crowd = ProjectFactory(slug="crowd", name="Crowd")
    MembershipFactory(project=crowd, user=root, role="lead")
    crowd_simulate(project=crowd, annotators=5, seed=3, new_screens=16, qc=True)
    job_run_now(kind="postprocess", project_slug="crowd")
    job_run_now(kind="short-answers", project_slug="crowd")
    work = ProjectFactory(slug="work", name="Work")
    ann, other = UserFactory(username="ann"), UserFactory(username="otto")
    MembershipFactory(project=work, user=ann, in_answer_pool=True)
    MembershipFactory(project=work, user=other, in_answer_pool=True)
    MembershipFactory(project=work, user=root, role="lead")
    generated_screens(work, start_id=920000, state=ScreenState.PREFILTER)
    generated_screens(work, start_id=920010, state=ScreenState.QUESTIONS_1)
    (second,) = generated_screens(work, start_id=920020, kinds=("settings",), state=ScreenState.QUESTIONS_2)
    add_question(second, author=other, text="What is the title of this screen?")
    second.questions.update(state=QuestionState.DRAFTING)
    (answering,) = generated_screens(work, start_id=920030, state=ScreenState.ANSWERING, split="train")
    add_question(answering, author=other, text="Who wrote the first message?")
    return {"crowd": crowd, "work": work, "root": root, "ann": ann}


def test_axe_finds_no_critical_or_serious_violation_on_any_page(worked_project, new_page, browser, live_server):
    crowd = worked_project["crowd"]
    annotator = worked_project["crowd"].memberships.exclude(role="lead").first().user
    found: dict[str, list[dict[str, Any]]] = {}

    def audit(page: Any, name: str) -> None:
        page.wait_for_load_state()
        violations = axe_violations(page)
        if violations:
            found[name] = violations

    # logged out: the login page
    context = browser.new_context(base_url=live_server.url)
    login = context.new_page()
    login.goto("/login/")
    audit(login, "login")
    context.close()

    # a site admin who leads the crowd's project: every lead page
    lead = new_page("root", width=1366, height=900)
    lead.goto("/projects/crowd/exports/")
    lead.locator("#export-start button[type=submit]").click()
    lead.wait_for_selector("a[href*='/download/']", timeout=30_000)
    screen = crowd.screens.filter(state=ScreenState.ANSWERING).first()
    pages = [
        "/",
        "/account/",
        "/projects/new/",
        "/projects/crowd/",
        "/projects/crowd/settings/",
        "/projects/crowd/members/",
        "/projects/crowd/guidelines/",
        "/projects/crowd/guidelines/edit/",
        "/projects/crowd/actions/",
        "/projects/crowd/skips/",
        "/projects/crowd/leases/",
        "/projects/crowd/analysis/",
        "/projects/crowd/quality/",
        "/projects/crowd/quality/gold/",
        f"/projects/crowd/quality/{annotator.pk}/",
        "/projects/crowd/release/postprocess/",
        "/projects/crowd/release/postprocess/decisions/",
        "/projects/crowd/release/short-answers/",
        "/projects/crowd/exports/",
        f"/projects/crowd/screens/{screen.rico_id}/",
        "/projects/crowd/work/",
    ]
    for path in pages:
        lead.goto(path)
        audit(lead, path)
    export = lead.locator("a[href*='/exports/']").filter(has_text="#").first
    if export.count():
        export.click()
        audit(lead, "export detail")
    if _open_stage(lead, "crowd", "review"):
        audit(lead, "review stage")

    # an annotator: the workspace home, each stage's page, their own work
    ann = new_page("ann", width=1366, height=900)
    for path in ("/projects/work/work/", "/projects/work/my-work/", "/projects/work/work/prefilter/next/"):
        ann.goto(path)
        audit(ann, path)
    for stage in ("prefilter", "questions-1", "questions-2", "answers"):
        assert _open_stage(ann, "work", stage), f"nothing waits in {stage}"
        audit(ann, f"{stage} stage")

    # and the layout faults axe-core's run came with are gone (issue 22 §13):
    # the funnel's longest label ("With answered questions") is drawn whole at 1366 px
    lead.goto("/projects/crowd/")
    cut = lead.evaluate(
        """() => { const svg = document.querySelector('svg.funnel').getBoundingClientRect();
           return [...document.querySelectorAll('svg.funnel .bar-label')]
             .filter(t => t.getBoundingClientRect().left < svg.left - 0.5).map(t => t.textContent); }"""
    )
    assert lead.locator("svg.funnel .bar-label", has_text="With answered questions").count() == 1
    assert cut == []
    # a project's first export is its export #1 (not the id of its jobs of every kind)
    lead.goto("/projects/crowd/exports/")
    assert lead.inner_text("#export-list tbody tr:last-child td:first-child").strip() == "1"
    lead.locator("#export-list tbody tr:last-child td:first-child a").click()
    assert lead.inner_text("h1").startswith("Export #1 ")
    # removing a member asks for a confirmation: the button alone removes nobody
    lead.goto("/projects/crowd/members/")
    row = lead.locator(f'tr:has-text("{annotator.username}")').first
    row.locator("summary", has_text="Remove").click()
    row.locator("button", has_text="Remove").click()
    lead.wait_for_load_state()
    assert crowd.memberships.filter(user=annotator).exists()
    # at phone width (390 px) no page of the workspace overflows sideways
    phone = new_page("ann", width=390, height=844)
    wide = {}
    for path in ("/projects/work/work/", "/projects/work/my-work/", "/"):
        phone.goto(path)
        wide[path] = phone.evaluate(OVERFLOW)
    for stage in ("prefilter", "questions-1", "questions-2", "answers"):
        _open_stage(phone, "work", stage)
        wide[stage] = phone.evaluate(OVERFLOW)
    assert not {k: v for k, v in wide.items() if v}, wide

    assert not found, "axe-core: critical or serious violations\n" + "\n".join(
        f"{page}: {v['impact']} {v['id']} ({v['help']}) at {v['nodes']}" for page, vs in found.items() for v in vs
    )
