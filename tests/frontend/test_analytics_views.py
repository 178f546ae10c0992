"""The lead's analysis page and its JSON twin: figures rendered as SVG with their numbers, who may
see them, and a query count that does not grow with the project."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import (
    Answer,
    AnswerElement,
    FiguresSnapshot,
    Question,
    QuestionSource,
    QuestionState,
    ReleaseJob,
    ScreenState,
    Verdict,
)
from pipeline.analytics.stored import snapshot_refresh
from tests.conftest import login
from tests.factories import ScreenFactory, UserFactory

pytestmark = pytest.mark.django_db


def _add_screens(project, *, count, start, annotator):
    """``count`` answered test-split screens, each with two questions: one email question whose answer
    has one VH leaf, one price question whose answer has two drawn boxes."""
    for i in range(count):
        screen = ScreenFactory(project=project, rico_id=str(start + i), state=ScreenState.ANSWERING, split="test")
        for pos, (text, boxes) in enumerate((("What is the email?", [1]), ("What is the price?", [None, None]))):
            q = Question.objects.create(
                screen=screen,
                source=QuestionSource.PASS_1,
                position=pos,
                text=text,
                state=QuestionState.KEPT,
                agreement="all" if pos == 0 else "two",
                answers_needed=1,
                answers_done=1,
            )
            a = Answer.objects.create(
                question=q, annotator=annotator, verdict=Verdict.ANSWERED, question_text=text, full_answer="x"
            )
            for k, vh in enumerate(boxes):
                AnswerElement.objects.create(
                    answer=a, position=k, vh_index=vh, left=0, top=0, right=5, bottom=5, text="x"
                )


@pytest.fixture
def data(project, annotator):
    ScreenFactory(project=project, state=ScreenState.EXCLUDED, exclusion_reason="non_english")
    _add_screens(project, count=3, start=100, annotator=annotator)
    return project


def url(project):
    return reverse("frontend:analysis", kwargs={"slug": project.slug})


def test_lead_sees_every_figure_with_its_numbers(data, lead, client):
    login(client, lead)
    # when
    response = client.get(url(data))
    # then
    assert response.status_code == 200
    html = response.content.decode()
    # the funnel: 4 imported, 1 non-English, 3 eligible, 3 with answered questions
    assert re.search(r'data-step="imported">4<', html)
    assert re.search(r'data-step="non-english">1<', html)
    assert re.search(r'data-step="with-answered">3<', html)
    # the histograms are SVG columns: 3 screens with 2 questions; 3 answers with 1 box and 3 with 2
    assert html.count('class="columns columns-questions"') == 1
    assert re.search(r'data-bin="2">\s*<rect[^>]*height="150.0"', html)
    assert "2: 3" in html and "1: 3" in html
    # VH/drawn shares, ours next to the paper's
    assert re.search(r'data-source="vh_only">.*?50\.0%.*?52\.0%', html, re.S)
    assert re.search(r'data-source="mixed">.*?0\.0%.*?0\.5%', html, re.S)
    # categories: email and price, 3 each
    assert re.search(r'data-category="email">\s*<td>Email address</td>\s*<td class="num">3<', html)
    assert re.search(r'data-category="price">\s*<td>Price</td>\s*<td class="num">3<', html)
    # agreement: 3 all, 3 two
    assert re.search(r'data-agreement="all">.*?>3<.*?50\.0%', html, re.S)
    # the annotator's row: 6 answers judged, all kept
    assert re.search(r'data-annotator="annie">.*?data-kept>100\.0%', html, re.S)
    assert '<svg class="spark"' in html


def test_project_page_links_the_analysis_for_leads_only(data, lead, annotator, client):
    project_url = reverse("frontend:project", kwargs={"slug": data.slug})
    login(client, lead)
    assert url(data).encode() in client.get(project_url).content
    login(client, annotator)
    assert url(data).encode() not in client.get(project_url).content


def test_site_admin_may_see_it(data, client):
    admin = UserFactory(username="root", is_superuser=True, is_staff=True)
    login(client, admin)
    assert client.get(url(data)).status_code == 200


def test_annotators_get_403_and_outsiders_404(data, annotator, outsider, client):
    login(client, annotator)
    assert client.get(url(data)).status_code == 403
    login(client, outsider)
    assert client.get(url(data)).status_code == 404


def test_anonymous_visitors_go_to_login(data, client):
    response = client.get(url(data))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("frontend:login"))


def test_empty_project_renders(project, lead, client):
    login(client, lead)
    response = client.get(url(project))
    assert response.status_code == 200
    assert b"No submissions yet." in response.content


def test_query_count_does_not_grow_with_the_project(data, lead, annotator, client, django_assert_max_num_queries):
    login(client, lead)
    client.get(url(data))  # the first view computes the figures (and warms up the session)
    with django_assert_max_num_queries(7):
        small = client.get(url(data))
    # given ten times as many screens, and the figures computed again
    _add_screens(data, count=30, start=1000, annotator=UserFactory(username="bea"))
    snapshot_refresh(project=data, kind="analysis")
    with CaptureQueriesContext(connection) as queries:
        big = client.get(url(data))
    assert len(queries) <= 7
    assert small.status_code == big.status_code == 200
    # the page reads the snapshot: it aggregates none of the project's screens, questions or answers
    tables = ("annotation_screen", "annotation_question", "annotation_answer", "annotation_assignment")
    assert not [q["sql"] for q in queries if any(f'"{t}"' in q["sql"] for t in tables)]
    assert re.search(r'data-step="imported">34<', big.content.decode())


def test_the_page_reads_stored_figures_and_says_when_they_were_computed(
    data, lead, client, settings, django_capture_on_commit_callbacks
):
    login(client, lead)
    html = client.get(url(data)).content.decode()  # the first view computes them
    assert 'id="computed"' in html and "Figures computed at" in html
    _add_screens(data, count=2, start=500, annotator=UserFactory(username="bea"))  # not in them yet
    assert re.search(r'data-step="imported">4<', client.get(url(data)).content.decode())
    # old figures: the view queues the job that computes them again, and shows the old ones meanwhile
    settings.SCREENQA_STORED_FIGURES_MAX_AGE = 0
    with django_capture_on_commit_callbacks(execute=True):
        html = client.get(url(data)).content.decode()
    assert "being computed again now" in html and re.search(r'data-step="imported">4<', html)
    job = ReleaseJob.objects.get(project=data, kind="analysis-figures")
    assert job.status == "done" and job.result["kind"] == "analysis" and job.created_by is None
    settings.SCREENQA_STORED_FIGURES_MAX_AGE = 300
    assert re.search(r'data-step="imported">6<', client.get(url(data)).content.decode())


def test_a_lead_asks_for_fresh_figures_and_others_may_not(
    data, lead, annotator, outsider, client, django_capture_on_commit_callbacks
):
    login(client, lead)
    client.get(url(data))
    _add_screens(data, count=1, start=700, annotator=annotator)
    refresh = reverse("frontend:analysis-refresh", kwargs={"slug": data.slug})
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(refresh)
    assert response.status_code == 302 and response["Location"] == url(data)
    assert re.search(r'data-step="imported">5<', client.get(url(data)).content.decode())
    # a second click while a job is alive starts nothing new
    client.post(refresh)
    client.post(refresh)
    assert ReleaseJob.objects.filter(project=data, kind="analysis-figures").exclude(status="done").count() == 1
    login(client, annotator)
    assert client.post(refresh).status_code == 403
    login(client, outsider)
    assert client.post(refresh).status_code == 404
    assert client.get(refresh).status_code in (404, 405)


def test_a_snapshot_that_cannot_be_read_back_is_computed_again(data, lead, client):
    login(client, lead)
    client.get(url(data))
    FiguresSnapshot.objects.filter(project=data).update(data=b"not a pickle")
    html = client.get(url(data)).content.decode()
    assert re.search(r'data-step="imported">4<', html)
    assert bytes(FiguresSnapshot.objects.get(project=data).data) != b"not a pickle"


# --- the JSON API ------------------------------------------------------------------------------


def api_url(project):
    return reverse("api-analysis", kwargs={"slug": project.slug})


def test_api_returns_the_figures(data, lead, api_client):
    api_client.force_authenticate(lead)
    response = api_client.get(api_url(data))
    assert response.status_code == 200
    body = response.json()
    assert body["funnel"] == {
        "imported": 4,
        "non_english": 1,
        "out_of_sync": 0,
        "eligible": 3,
        "with_questions": 3,
        "with_answered": 3,
    }
    assert body["questions_per_screen"]["bins"][2] == {"label": "2", "count": 3, "share": 1.0}
    assert body["answer_elements"]["sources"]["shares"] == {"vh_only": 0.5, "drawn_only": 0.5, "mixed": 0.0}
    assert body["answer_elements"]["sources"]["paper"]["mixed"] == 0.005
    categories = {r["key"]: r["count"] for r in body["categories"]["rows"]}
    assert categories["email"] == 3 and categories["price"] == 3 and categories["other"] == 0
    assert body["agreement"]["shares"] == {"all": 0.5, "two": 0.5, "none": 0.0}
    (annie,) = body["annotators"]
    assert annie["username"] == "annie" and annie["kept_share"] == 1.0 and annie["answers_judged"] == 6
    assert body["computed_at"] and body["refreshing"] is False
    assert (body["annotators_count"], body["page"], body["pages"]) == (1, 1, 1)


def test_annotators_come_a_page_at_a_time(data, lead, api_client, client):
    for i in range(3):
        _add_screens(data, count=1, start=2000 + i, annotator=UserFactory(username=f"zed{i}"))
    api_client.force_authenticate(lead)
    body = api_client.get(api_url(data), {"page_size": 2, "page": 2}).json()
    assert (body["annotators_count"], body["page"], body["pages"], len(body["annotators"])) == (4, 2, 2, 2)
    assert api_client.get(api_url(data), {"page": 9}).status_code == 400
    login(client, lead)
    html = client.get(url(data)).content.decode()
    assert html.count("<tr data-annotator=") == 4 and "Page " not in html  # one page of 50


def test_api_refresh_queues_the_job_for_leads_only(data, lead, annotator, outsider, api_client):
    refresh = reverse("api-analysis-refresh", kwargs={"slug": data.slug})
    api_client.force_authenticate(lead)
    first = api_client.post(refresh)
    again = api_client.post(refresh)
    assert first.status_code == again.status_code == 202
    assert first.json()["job_id"] == again.json()["job_id"] and first.json()["status"] == "queued"
    api_client.force_authenticate(annotator)
    assert api_client.post(refresh).status_code == 403
    api_client.force_authenticate(outsider)
    assert api_client.post(refresh).status_code == 404


def test_api_permissions(data, annotator, outsider, api_client):
    assert api_client.get(api_url(data)).status_code == 403  # anonymous
    api_client.force_authenticate(annotator)
    assert api_client.get(api_url(data)).status_code == 403
    api_client.force_authenticate(outsider)
    assert api_client.get(api_url(data)).status_code == 404


def test_api_is_in_the_schema(client):
    schema = client.get(reverse("api-schema"))
    assert schema.status_code == 200
    assert b"/api/projects/{slug}/analysis/" in schema.content
    assert b"AnalysisOutput" in schema.content


# --- the model against the crowd (docs/assist.md) ----------------------------------------------


def test_with_a_backend_the_page_and_the_api_compare_the_model_with_the_crowd(
    data, lead, annotator, client, api_client
):
    from annotation.models import Assignment, AssistUse, PrefilterJudgment, Suggestion

    login(client, lead)
    assert 'id="model-and-crowd"' not in client.get(url(data)).content.decode()  # no backend: no card
    data.assist_url = "http://127.0.0.1:9"
    data.save(update_fields=["assist_url"])
    # answers: the model's first element is the kept answers' element on the email question of one screen
    email = Question.objects.filter(screen__project=data, text="What is the email?").order_by("pk").first()
    Suggestion.objects.create(
        project=data,
        stage="answers",
        screen=email.screen,
        question=email,
        status="ok",
        calls=1,
        result={"elements": [{"vh_index": 1, "bounds": [0, 0, 5, 5], "text": "x", "score": 0.9}]},
    )
    # pre-filtering: two judges agree with each other and not with the model on one screen
    screen = ScreenFactory(project=data, state=ScreenState.QUESTIONS_1)
    Suggestion.objects.create(
        project=data,
        stage="prefilter",
        screen=screen,
        status="ok",
        calls=1,
        result={"judgments": {"non_english_app": 0.9, "vh_out_of_sync": 0.1}},
    )
    for judge in (annotator, lead):
        done = Assignment.objects.create(
            project=data,
            screen=screen,
            stage="prefilter",
            annotator=judge,
            status="submitted",
            lease_expires_at=screen.imported_at,
            submitted_at=screen.imported_at,
        )
        PrefilterJudgment.objects.create(
            assignment=done, screen=screen, annotator=judge, non_english_app=False, vh_out_of_sync=False
        )
        AssistUse.objects.create(
            assignment=done, project=data, user=judge, stage="prefilter", purpose="work", use="edited"
        )
    snapshot_refresh(project=data, kind="analysis")
    html = client.get(url(data)).content.decode()
    card = re.search(r'<section class="card" id="model-and-crowd".*?</section>', html, re.S).group(0)
    assert re.search(r'data-model="answers">.*?1 of 1 \(100\.0%\).*?3 of 6 \(50\.0%\)', card, re.S)
    assert re.search(r'data-model="prefilter">.*?0 of 1 \(0\.0%\).*?1 of 1 \(100\.0%\).*?0 of 2 \(0\.0%\)', card, re.S)
    api_client.force_authenticate(lead)
    model = api_client.get(api_url(data)).json()["model"]
    assert model["answers"] == {"questions": 1, "agree": 1, "share": 1.0}
    assert model["prefilter"] == {
        "screens": 1,
        "agree": 0,
        "share": 0.0,
        "judges_screens": 1,
        "judges_agree": 1,
        "judges_share": 1.0,
    }
    assert model["accepted"]["prefilter"] == {"shown": 2, "accepted": 0, "share": 0.0}
    # a snapshot stored before the comparison existed reads as none (the API and the page do not break)
    import pickle

    stored = FiguresSnapshot.objects.get(project=data, kind="analysis")
    figures = pickle.loads(stored.data)
    del figures.__dict__["model"]
    FiguresSnapshot.objects.filter(pk=stored.pk).update(data=pickle.dumps(figures))
    assert api_client.get(api_url(data)).json()["model"] is None
    assert 'id="model-and-crowd"' not in client.get(url(data)).content.decode()
