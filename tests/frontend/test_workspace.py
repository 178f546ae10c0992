"""The annotator workspace pages, through Django's test client, on the real engine.

Given/when/then; permissions (other annotators, leads, outsiders get 404), server-side
validation (the reason is shown next to its field and nothing posted is lost) and query
counts of the hot paths (page load, autosave).
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import (
    Answer,
    Assignment,
    AssignmentStatus,
    PrefilterJudgment,
    Question,
    QuestionSource,
    QuestionState,
    ScreenState,
    Verdict,
)
from pipeline.engine import assignment_next
from tests.conftest import login
from tests.factories import CandidateFactory, MembershipFactory, ScreenFactory, UserFactory

pytestmark = pytest.mark.django_db


def _screen(project, *, state=ScreenState.PREFILTER, split="", **kwargs):
    screen = ScreenFactory(project=project, state=state, split=split, **kwargs)
    CandidateFactory(screen=screen, vh_index=3, left=10, top=20, right=500, bottom=80, text="Deep Squat")
    CandidateFactory(screen=screen, vh_index=5, left=10, top=100, right=300, bottom=160, text="3 sets")
    CandidateFactory(
        screen=screen, vh_index=7, left=10, top=200, right=300, bottom=260, text='<script>alert("x")</script>'
    )
    return screen


def _question(screen, *, author, text="What is the first exercise?"):
    return Question.objects.create(
        screen=screen,
        author=author,
        source=QuestionSource.PASS_1,
        position=Question.objects.filter(screen=screen).count(),
        text=text,
        state=QuestionState.ANSWERING,
        answers_needed=1,
    )


@pytest.fixture
def writer(project):
    user = UserFactory(username="wendy")
    MembershipFactory(project=project, user=user)
    return user


def _lease(project, user, stage):
    assignment = assignment_next(project=project, user=user, stage=stage)
    assert assignment is not None
    return assignment


def _page(assignment):
    return reverse("frontend:workspace-assignment", kwargs={"slug": assignment.project.slug, "pk": assignment.pk})


def _url(name, assignment):
    return reverse(f"frontend:workspace-{name}", kwargs={"slug": assignment.project.slug, "pk": assignment.pk})


def _config(response):
    html = response.content.decode()
    start = html.index('<script id="ws-config" type="application/json">') + len(
        '<script id="ws-config" type="application/json">'
    )
    return json.loads(html[start : html.index("</script>", start)])


# --- home and next ---------------------------------------------------------------------


def test_home_lists_stages_with_waiting_and_done_counts(client, project, annotator, django_assert_max_num_queries):
    # given two screens waiting for pre-filtering
    _screen(project)
    _screen(project)
    login(client, annotator)
    # when the annotator opens the workspace
    # one count per stage, which stages have gold, their control items (``available``): fixed
    with django_assert_max_num_queries(14):
        response = client.get(reverse("frontend:workspace", kwargs={"slug": project.slug}))
    # then each stage they may work on has a row with its counts and a button
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-stage="prefilter"' in html and 'data-stage="answers"' in html
    row = html[html.index('data-stage="prefilter"') :]
    assert '<td class="num" data-testid="available">2</td>' in row[:600]
    assert reverse("frontend:workspace-next", kwargs={"slug": project.slug, "stage": "prefilter"}) in html


def test_home_is_for_members_only(client, project, outsider):
    url = reverse("frontend:workspace", kwargs={"slug": project.slug})
    assert client.get(url).status_code == 302  # anonymous: to the login page
    login(client, outsider)
    assert client.get(url).status_code == 404


def test_next_leases_on_post_and_opens_the_assignment_page(client, project, annotator):
    _screen(project)
    login(client, annotator)
    url = reverse("frontend:workspace-next", kwargs={"slug": project.slug, "stage": "prefilter"})
    response = client.post(url)
    assignment = Assignment.objects.get(annotator=annotator)
    assert response.status_code == 302 and response["Location"] == _page(assignment)
    # asking again is idempotent: the same open lease
    again = client.post(url)
    assert again["Location"] == _page(assignment)
    assert Assignment.objects.count() == 1
    # a GET opens the lease the annotator holds, without writing
    assert client.get(url)["Location"] == _page(assignment)


def test_next_on_get_never_leases(client, project, annotator):
    # given a screen waiting and an annotator holding nothing
    _screen(project)
    login(client, annotator)
    url = reverse("frontend:workspace-next", kwargs={"slug": project.slug, "stage": "prefilter"})
    # when they (or a cross-site link, or a prefetch) GET the next URL
    response = client.get(url)
    # then nothing is leased: the page is a form that POSTs to the same URL
    assert response.status_code == 200
    assert not Assignment.objects.exists()
    html = response.content.decode()
    assert f'<form method="post" action="{url}"' in html and 'data-testid="open-next"' in html
    assert "csrfmiddlewaretoken" in html


def test_open_next_forms_on_home_post_with_csrf(project, annotator):
    # given the CSRF check as in production (the test client skips it by default)
    _screen(project)
    strict = Client(enforce_csrf_checks=True)
    login(strict, annotator)
    url = reverse("frontend:workspace-next", kwargs={"slug": project.slug, "stage": "prefilter"})
    # when a cross-site form posts without the token: refused, nothing leased
    assert strict.post(url).status_code == 403
    assert not Assignment.objects.exists()
    # the home page's button carries the token and leases
    home = strict.get(reverse("frontend:workspace", kwargs={"slug": project.slug})).content.decode()
    token = home.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    assert strict.post(url, {"csrfmiddlewaretoken": token}).status_code == 302
    assert Assignment.objects.filter(annotator=annotator).count() == 1


def test_next_with_nothing_waiting_says_so(client, project, annotator):
    login(client, annotator)
    response = client.get(reverse("frontend:workspace-next", kwargs={"slug": project.slug, "stage": "questions-1"}))
    assert response.status_code == 200
    assert b"nothing for you right now" in response.content


def test_next_refuses_unknown_stage_outsiders_and_non_pool_answerers(client, project, annotator, outsider):
    login(client, annotator)
    assert (
        client.get(reverse("frontend:workspace-next", kwargs={"slug": project.slug, "stage": "nope"})).status_code
        == 404
    )
    annotator.memberships.update(in_answer_pool=False)
    assert (
        client.get(reverse("frontend:workspace-next", kwargs={"slug": project.slug, "stage": "answers"})).status_code
        == 403
    )
    client.logout()
    login(client, outsider)
    assert (
        client.get(reverse("frontend:workspace-next", kwargs={"slug": project.slug, "stage": "prefilter"})).status_code
        == 404
    )


# --- the assignment page ---------------------------------------------------------------


def test_prefilter_page_renders_overlay_data_escaped(client, project, annotator, django_assert_max_num_queries):
    screen = _screen(project)
    assignment = _lease(project, annotator, "prefilter")
    login(client, annotator)
    with django_assert_max_num_queries(5):  # session, user, assignment, candidates, payload extra
        response = client.get(_page(assignment))
    assert response.status_code == 200
    html = response.content.decode()
    # the candidate text reaches the script only through json_script (escaped), never raw
    assert '<script>alert("x")</script>' not in html
    config = _config(response)
    assert config["stage"] == "prefilter"
    assert config["screen"]["rico_id"] == screen.rico_id
    assert [c["vh_index"] for c in config["screen"]["candidates"]] == [3, 5, 7]
    assert config["screen"]["candidates"][2]["text"] == '<script>alert("x")</script>'
    assert f'viewBox="0 0 {screen.width} {screen.height}"' in html
    assert "Non-English app" in html and "ghost" in html  # the two judgments, the figure-3 rules
    assert "/static/frontend/workspace/main.js" in html


def test_assignment_pages_are_only_for_their_annotator(client, project, annotator, writer, lead, outsider):
    _screen(project)
    assignment = _lease(project, annotator, "prefilter")
    for other in (writer, lead, outsider):
        client.logout()
        login(client, other)
        assert client.get(_page(assignment)).status_code == 404, other
        assert client.post(_page(assignment), {"action": "submit"}).status_code == 404
        assert client.post(_url("draft", assignment), "{}", content_type="application/json").status_code == 404
        assert client.post(_url("extend", assignment)).status_code == 404
        assert client.post(_url("skip", assignment), {"reason": "x"}).status_code == 404
        assert client.post(_url("release", assignment)).status_code == 404
        assert client.post(_url("hints", assignment), {"question": "x"}).status_code == 404
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.LEASED and assignment.draft == {}


def test_assignment_page_in_another_projects_url_is_404(client, project, annotator):
    _screen(project)
    assignment = _lease(project, annotator, "prefilter")
    login(client, annotator)
    url = reverse("frontend:workspace-assignment", kwargs={"slug": "other-project", "pk": assignment.pk})
    assert client.get(url).status_code == 404


def test_prefilter_submit_records_the_judgment_and_opens_the_next(client, project, annotator):
    screen = _screen(project)
    second = _screen(project)
    assignment = _lease(project, annotator, "prefilter")
    login(client, annotator)
    response = client.post(_page(assignment), {"vh_out_of_sync": "on", "note": "menu <b>ghost</b>", "action": "submit"})
    assert response.status_code == 302
    judgment = PrefilterJudgment.objects.get(screen=screen)
    assert (judgment.non_english_app, judgment.vh_out_of_sync, judgment.note) == (False, True, "menu <b>ghost</b>")
    # the submit leases the next screen at once and opens it
    nxt = Assignment.objects.get(annotator=annotator, status=AssignmentStatus.LEASED)
    assert nxt.screen == second and response["Location"] == _page(nxt)


def test_questions_submit_without_questions_is_refused_and_keeps_input(client, project, annotator):
    _screen(project, state=ScreenState.QUESTIONS_1)
    assignment = _lease(project, annotator, "questions-1")
    login(client, annotator)
    response = client.post(_page(assignment), {"question": ["", "  "], "action": "submit"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Write at least one question, or choose “Nothing to ask”." in html
    assert html.count('name="question"') == project.questions_pass1_cap
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.LEASED


def test_questions_nothing_to_ask_is_an_explicit_action(client, project, annotator):
    screen = _screen(project, state=ScreenState.QUESTIONS_1)
    assignment = _lease(project, annotator, "questions-1")
    login(client, annotator)
    response = client.post(_page(assignment), {"question": ["typed but dropped"], "action": "nothing"})
    assert response.status_code == 302
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED and assignment.submission == {"questions": []}
    assert not Question.objects.filter(screen=screen).exists()


def test_questions_pass_two_shows_pass_one_and_refuses_a_repeat(client, project, annotator, writer):
    screen = _screen(project, state=ScreenState.QUESTIONS_1)
    first = _lease(project, writer, "questions-1")
    login(client, writer)
    assert (
        client.post(_page(first), {"question": ["What is the first exercise?", "", "How long is a set?"]}).status_code
        == 302
    )
    assert list(Question.objects.filter(screen=screen).values_list("text", flat=True)) == [
        "What is the first exercise?",
        "How long is a set?",
    ]
    client.logout()
    second = _lease(project, annotator, "questions-2")
    assert second.screen == screen
    login(client, annotator)
    page = client.get(_page(second)).content.decode()
    assert "Already asked (pass 1, read-only)" in page and "How long is a set?" in page
    assert page.count('name="question"') == project.questions_pass2_cap
    refused = client.post(_page(second), {"question": ["what is the first exercise?", "A new one?"]})
    assert refused.status_code == 400
    assert "already asked on this screen" in refused.content.decode()
    assert 'value="A new one?"' in refused.content.decode()  # nothing typed is lost


def test_answer_submit_writes_ordered_elements(client, project, annotator, writer, django_assert_max_num_queries):
    screen = _screen(project, state=ScreenState.ANSWERING, split="train")
    question = _question(screen, author=writer)
    assignment = _lease(project, annotator, "answers")
    login(client, annotator)
    with django_assert_max_num_queries(5):  # the hot path: session, user, assignment, candidates
        page = client.get(_page(assignment))
    assert _config(page)["question"] == {"id": question.pk, "text": question.text}
    elements = [
        {"vh_index": 5, "text": "3 sets"},
        {"bounds": [40, 300, 400, 360], "text": "15x"},
        {"vh_index": 3, "text": "Deep Squat"},
    ]
    response = client.post(
        _page(assignment),
        {
            "action": "answer",
            "question": "What is the first exercise ?",
            "elements": json.dumps(elements),
            "full_answer": "The first exercise is Deep Squat, 3 sets, 15x.",
        },
    )
    assert response.status_code == 302
    answer = Answer.objects.get(question=question)
    assert answer.verdict == Verdict.ANSWERED and answer.question_text == "What is the first exercise ?"
    got = [(e.position, e.vh_index, e.bounds, e.text) for e in answer.elements.all()]
    assert got == [
        (0, 5, [10, 100, 300, 160], "3 sets"),
        (1, None, [40, 300, 400, 360], "15x"),
        (2, 3, [10, 20, 500, 80], "Deep Squat"),
    ]


@pytest.mark.parametrize(
    ("post", "field", "message"),
    [
        ({"elements": "[]", "full_answer": "It is X."}, "elements", "Select or draw at least one element"),
        ({"elements": '[{"vh_index": 3, "text": "  "}]', "full_answer": "X."}, "elements", "Element 1 has no text"),
        ({"elements": '[{"vh_index": 3, "text": "Deep"}]', "full_answer": ""}, "full_answer", "full sentence"),
        ({"elements": "not json", "full_answer": "X."}, "elements", "could not be read"),
        ({"elements": '[{"bounds": [5, 5, 5, 9], "text": "a"}]', "full_answer": "X."}, "elements", "positive area"),
        ({"elements": '[{"vh_index": 99, "text": "a"}]', "full_answer": "X."}, "elements", "No candidate element"),
        ({"elements": '[{"bounds": [0, 0, 5000, 10], "text": "a"}]', "full_answer": "X."}, "elements", "inside"),
        (
            {"question": " ", "elements": '[{"vh_index": 3, "text": "a"}]', "full_answer": "X."},
            "question",
            "cannot be empty",
        ),
    ],
)
def test_incomplete_answer_is_refused_next_to_its_field(client, project, annotator, writer, post, field, message):
    screen = _screen(project, state=ScreenState.ANSWERING, split="train")
    _question(screen, author=writer)
    assignment = _lease(project, annotator, "answers")
    login(client, annotator)
    body = {"action": "answer", "question": "What is the first exercise?", **post}
    response = client.post(_page(assignment), body)
    assert response.status_code == 400
    html = response.content.decode()
    slot = html.index(f'data-for="{field}"')
    assert message in html[slot : slot + 400]
    assert _config(response)["errors"][field]
    assert not Answer.objects.exists()
    # the posted text comes back (nothing lost)
    if post.get("full_answer"):
        assert post["full_answer"] in html


def test_invalid_and_not_answerable_verdicts(client, project, annotator, writer):
    screen = _screen(project, state=ScreenState.ANSWERING, split="train")
    q1 = _question(screen, author=writer, text="Wat iz tis?")
    q2 = _question(screen, author=writer, text="What is the weather on Mars?")
    login(client, annotator)
    first = _lease(project, annotator, "answers")
    client.post(
        _page(first), {"action": "invalid", "question": "Wat iz tis?", "elements": '[{"vh_index": 3, "text": "x"}]'}
    )
    second = _lease(project, annotator, "answers")
    client.post(
        _page(second), {"action": "not_answerable", "question": "What is the weather on Mars?", "full_answer": ""}
    )
    verdicts = dict(Answer.objects.values_list("question_id", "verdict"))
    assert verdicts == {q1.pk: Verdict.INVALID, q2.pk: Verdict.NOT_ANSWERABLE}
    assert not Answer.objects.get(question=q1).elements.exists()


def test_not_answerable_question_writing(client, project, annotator, writer):
    screen = _screen(project, state=ScreenState.ANSWERING, split="train", not_answerable_sampled=True)
    _question(screen, author=writer, text="What is the first exercise?")
    assignment = _lease(project, annotator, "not-answerable")
    login(client, annotator)
    page = client.get(_page(assignment)).content.decode()
    assert "plausible for this app but that this screen cannot answer" in page
    assert client.post(_page(assignment), {"question": ""}).status_code == 400
    assert client.post(_page(assignment), {"question": "What is the trainer's phone number?"}).status_code == 302
    written = Question.objects.get(screen=screen, source=QuestionSource.NOT_ANSWERABLE)
    assert written.text == "What is the trainer's phone number?" and written.author == annotator


# --- drafts, lease, skip, release ------------------------------------------------------


def test_draft_autosave_restores_on_reload(client, project, annotator, django_assert_max_num_queries):
    _screen(project, state=ScreenState.QUESTIONS_1)
    assignment = _lease(project, annotator, "questions-1")
    login(client, annotator)
    draft = {"questions": ["What is <b>this</b>?", ""]}
    # session, user, ownership, the engine's read, savepoint, row lock, update, release
    with django_assert_max_num_queries(8):
        response = client.post(_url("draft", assignment), json.dumps({"draft": draft}), content_type="application/json")
    assert response.status_code == 200 and "lease_expires_at" in response.json()
    assignment.refresh_from_db()
    assert assignment.draft == draft
    page = client.get(_page(assignment))
    assert _config(page)["state"] == draft and _config(page)["restored"] is True
    assert 'value="What is &lt;b&gt;this&lt;/b&gt;?"' in page.content.decode()


def test_draft_refuses_bad_bodies_and_get(client, project, annotator):
    _screen(project)
    assignment = _lease(project, annotator, "prefilter")
    login(client, annotator)
    url = _url("draft", assignment)
    assert client.post(url, "not json", content_type="application/json").status_code == 400
    assert client.post(url, json.dumps({"draft": [1]}), content_type="application/json").status_code == 400
    assert (
        client.post(url, json.dumps({"draft": {"x": "y" * 300_000}}), content_type="application/json").status_code
        == 400
    )
    assert client.get(url).status_code == 405


def test_draft_after_submit_is_a_conflict(client, project, annotator):
    _screen(project)
    assignment = _lease(project, annotator, "prefilter")
    login(client, annotator)
    client.post(_page(assignment), {"action": "submit"})
    response = client.post(
        _url("draft", assignment), json.dumps({"draft": {"note": "x"}}), content_type="application/json"
    )
    assert response.status_code == 409 and response.json()["lease"] == "lost"


def test_extend_renews_the_lease(client, project, annotator):
    _screen(project)
    assignment = _lease(project, annotator, "prefilter")
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() + timedelta(minutes=2))
    login(client, annotator)
    response = client.post(_url("extend", assignment))
    assert response.status_code == 200
    assignment.refresh_from_db()
    assert assignment.lease_expires_at > timezone.now() + timedelta(minutes=project.lease_minutes - 1)


def test_submit_after_the_work_went_to_someone_else_keeps_the_content(client, project, annotator, writer):
    # given a lease that ran out and was taken by another writer
    _screen(project, state=ScreenState.QUESTIONS_1)
    mine = _lease(project, annotator, "questions-1")
    Assignment.objects.filter(pk=mine.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    theirs = _lease(project, writer, "questions-1")
    assert theirs.screen_id == mine.screen_id
    login(client, annotator)
    # when the first annotator submits
    response = client.post(_page(mine), {"question": ["My late question?"]})
    # then the page says the lease is lost and the content is kept as the draft
    assert response.status_code == 409
    html = response.content.decode()
    assert "draft" in html.lower()
    mine.refresh_from_db()
    assert mine.draft == {"questions": ["My late question?"]}
    # and the page shows it, to copy from
    assert 'data-testid="kept-draft"' in html and "My late question?" in html


def test_skip_needs_a_reason_then_opens_the_next(client, project, annotator):
    _screen(project)
    assignment = _lease(project, annotator, "prefilter")
    login(client, annotator)
    refused = client.post(_url("skip", assignment), {"reason": "  "})
    assert refused.status_code == 400
    assert "Say why you skip this one." in refused.content.decode()
    assert 'data-open="1"' in refused.content.decode()  # the skip dialog re-opens with the reason
    # the quick-reason button's value wins over an empty free-text field
    response = client.post(_url("skip", assignment), {"reason": ["", "Screenshot is blank, black or unreadable"]})
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "frontend:workspace-next", kwargs={"slug": project.slug, "stage": "prefilter"}
    )
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SKIPPED
    assert assignment.skip_reason == "Screenshot is blank, black or unreadable"


def test_release_returns_to_the_workspace_and_closed_page(client, project, annotator):
    _screen(project)
    assignment = _lease(project, annotator, "prefilter")
    login(client, annotator)
    response = client.post(_url("release", assignment))
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:workspace", kwargs={"slug": project.slug})
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.RELEASED
    closed = client.get(_page(assignment))
    assert closed.status_code == 200 and b'data-testid="closed"' in closed.content


# --- live hints ------------------------------------------------------------------------


def test_hints_partial_flags_duplicates_and_rule_breaks(client, project, annotator, writer):
    screen = _screen(project, state=ScreenState.QUESTIONS_2)
    _question(screen, author=writer, text="What is the first exercise?")
    screen.questions.update(state=QuestionState.DRAFTING)
    assignment = _lease(project, annotator, "questions-2")
    login(client, annotator)
    url = _url("hints", assignment)
    dup = client.post(url, {"question": ["what's the first exercise", ""], "index": "0"}, HTTP_HX_REQUEST="true")
    assert dup.status_code == 200 and b'data-kind="duplicate"' in dup.content
    count = client.post(url, {"question": ["", "How many <sets> are shown on the screen?"], "index": "1"})
    html = count.content.decode()
    assert 'data-kind="counting"' in html and "<sets>" not in html
    sibling = client.post(url, {"question": ["Where is the gym?", "where is the gym"], "index": "1"})
    assert b'data-kind="duplicate"' in sibling.content
    clean = client.post(url, {"question": ["What is the name of the trainer?"], "index": "0"})
    assert clean.content.strip() == b""


def test_questions_pass_two_flags_a_pass_one_question_on_the_page(client, project, annotator, writer):
    screen = _screen(project, state=ScreenState.QUESTIONS_1)
    first = _lease(project, writer, "questions-1")
    login(client, writer)
    client.post(_page(first), {"question": ["How many items are there?", "What is the title?"]})
    client.logout()
    counting, fine = Question.objects.filter(screen=screen).order_by("position")
    second = _lease(project, annotator, "questions-2")
    login(client, annotator)
    page = client.get(_page(second)).content.decode()
    assert f'name="flag-{counting.pk}"' in page and f'name="flag-{fine.pk}"' in page
    assert "Needs counting" in page  # the writing rules are the reasons
    refused = client.post(_page(second), {f"flag-{counting.pk}": "bad-rule", "question": ["Which tab is open?"]})
    assert refused.status_code == 400 and "Unknown reason" in refused.content.decode()
    assert '<option value="bad-rule"' not in refused.content.decode()
    done = client.post(_page(second), {f"flag-{counting.pk}": "counting", f"flag-{fine.pk}": "", "action": "nothing"})
    assert done.status_code == 302
    counting.refresh_from_db()
    fine.refresh_from_db()
    assert (counting.flag_reason, counting.flagged_by_id) == ("counting", second.pk)
    assert (fine.flag_reason, fine.flagged_by_id) == ("", None)
