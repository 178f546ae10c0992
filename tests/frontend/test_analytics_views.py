"""The lead's analysis page and its JSON twin: figures rendered as SVG with their numbers, who may
see them, and a query count that does not grow with the project."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.models import Answer, AnswerElement, Question, QuestionSource, QuestionState, ScreenState, Verdict
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
    client.get(url(data))  # warm up (session, content types)
    with django_assert_max_num_queries(12):
        small = client.get(url(data))
    # given ten times as many screens
    _add_screens(data, count=30, start=1000, annotator=UserFactory(username="bea"))
    with django_assert_max_num_queries(12):
        big = client.get(url(data))
    assert small.status_code == big.status_code == 200
    assert re.search(r'data-step="imported">34<', big.content.decode())


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
