"""A lead's pages (frontend/views/manage.py, and the members pages of frontend/views/members.py): who may
open them, what bad input shows, and what each page changes. Members, credentials and invitations in
detail: tests/frontend/test_members_views.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import (
    App,
    Assignment,
    AssignmentStatus,
    Membership,
    PrefilterJudgment,
    Project,
    QuestionState,
    Screen,
    ScreenState,
)
from tests.conftest import login
from tests.factories import (
    AppFactory,
    MembershipFactory,
    ProjectFactory,
    QuestionFactory,
    ScreenFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def html(response) -> str:
    return response.content.decode()


@pytest.fixture
def admin(db):
    return UserFactory(username="root", is_superuser=True)


@pytest.fixture
def other_lead(db):
    """The lead of another project."""
    user = UserFactory(username="olga")
    MembershipFactory(project=ProjectFactory(slug="other"), user=user, role="lead")
    return user


@pytest.fixture
def leased(project, annotator):
    screen = ScreenFactory(project=project, state=ScreenState.QUESTIONS_1)
    return Assignment.objects.create(
        project=project,
        stage="questions-1",
        screen=screen,
        annotator=annotator,
        lease_expires_at=timezone.now() + timedelta(minutes=30),
    )


# Every lead page and action: (method, url, data). ``{a}``: the annotator's id; ``{lease}``: a lease.
LEAD_URLS = [
    ("get", "/projects/demo/settings/", {}),
    ("post", "/projects/demo/settings/", "SETTINGS"),
    ("get", "/projects/demo/members/", {}),
    ("post", "/projects/demo/members/add/", {"username": "newbie", "role": "annotator"}),
    ("post", "/projects/demo/members/bulk/", {"count": "1", "role": "annotator"}),
    ("post", "/projects/demo/members/{a}/", {"role": "reviewer"}),
    ("post", "/projects/demo/members/{a}/remove/", {"confirm": "yes"}),
    ("post", "/projects/demo/invitations/", {"role": "annotator", "days": "7"}),
    ("get", "/projects/demo/guidelines/edit/", {}),
    ("post", "/projects/demo/guidelines/edit/", {"text": "# Rules"}),
    ("get", "/projects/demo/actions/", {}),
    ("post", "/projects/demo/actions/not-answerable/", {"sample_size": "1"}),
    ("post", "/projects/demo/actions/non-english/", {"package": "com.x"}),
    ("post", "/projects/demo/actions/non-english/", {"package": "com.x", "english": "1"}),
    ("get", "/projects/demo/skips/", {}),
    ("get", "/projects/demo/leases/", {}),
    ("get", "/projects/demo/leases/members/", {"q": "a"}),
    ("post", "/projects/demo/leases/{lease}/", {"action": "free"}),
]


def _call(client, method, url, data, *, annotator, leased):
    url = url.format(a=annotator.pk, lease=leased.pk)
    if data == "SETTINGS":
        data = _settings_data(leased.project, lease_minutes=40)
    return getattr(client, method)(url, data)


class TestPermissions:
    @pytest.mark.parametrize(("method", "url", "data"), LEAD_URLS)
    def test_anonymous_is_sent_to_log_in(self, client, annotator, leased, method, url, data):
        response = _call(client, method, url, data, annotator=annotator, leased=leased)
        assert response.status_code == 302 and response["Location"].startswith("/login/")

    @pytest.mark.parametrize(("method", "url", "data"), LEAD_URLS)
    def test_outsiders_and_other_projects_leads_get_404(
        self, client, outsider, other_lead, annotator, leased, method, url, data
    ):
        for user in (outsider, other_lead):
            login(client, user)
            assert _call(client, method, url, data, annotator=annotator, leased=leased).status_code == 404, user
        assert Membership.objects.filter(user=annotator).exists()  # nothing changed

    @pytest.mark.parametrize(("method", "url", "data"), LEAD_URLS)
    def test_annotators_and_reviewers_get_403(self, client, project, annotator, leased, method, url, data):
        reviewer = UserFactory(username="rita")
        MembershipFactory(project=project, user=reviewer, role="reviewer")
        for user in (annotator, reviewer):
            login(client, user)
            assert _call(client, method, url, data, annotator=annotator, leased=leased).status_code == 403, user
        assert Assignment.objects.get(pk=leased.pk).status == AssignmentStatus.LEASED

    @pytest.mark.parametrize(("method", "url", "data"), LEAD_URLS)
    def test_leads_and_site_admins_may(self, client, lead, admin, annotator, leased, method, url, data):
        AppFactory(project=leased.project, package="com.x")
        login(client, lead if method == "post" else admin)
        response = _call(client, method, url, data, annotator=annotator, leased=leased)
        assert response.status_code in (200, 302), html(response)[:2000]
        if method == "get":
            login(client, lead)
            assert _call(client, method, url, data, annotator=annotator, leased=leased).status_code == 200

    def test_project_creation_is_for_site_admins(self, client, lead, admin):
        assert client.get("/projects/new/").status_code == 302
        login(client, lead)
        assert client.get("/projects/new/").status_code == 403
        assert client.post("/projects/new/", {"name": "N", "slug": "n"}).status_code == 403
        assert not Project.objects.filter(slug="n").exists()
        login(client, admin)
        assert client.get("/projects/new/").status_code == 200

    def test_guidelines_are_for_members(self, client, annotator, outsider, other_lead):
        assert client.get("/projects/demo/guidelines/").status_code == 302
        for user in (outsider, other_lead):
            login(client, user)
            assert client.get("/projects/demo/guidelines/").status_code == 404
        login(client, annotator)
        assert client.get("/projects/demo/guidelines/").status_code == 200


class TestProjects:
    def test_admin_creates_a_project_with_the_papers_defaults(self, client, admin):
        login(client, admin)
        response = client.post("/projects/new/", {"name": "Phones", "slug": "phones", "description": ""})
        assert response.status_code == 302 and response["Location"] == "/projects/phones/settings/"
        project = Project.objects.get(slug="phones")
        assert (project.answers_validation, project.split_train, project.qualification_threshold) == (3, 80, 0.9)

    def test_a_taken_slug_is_an_error_not_a_500(self, client, admin, project):
        login(client, admin)
        response = client.post("/projects/new/", {"name": "Again", "slug": "demo"})
        assert response.status_code == 400 and 'role="alert"' in html(response)
        assert Project.objects.filter(slug="demo").count() == 1

    def test_lead_edits_settings(self, client, lead, project):
        login(client, lead)
        form = client.get("/projects/demo/settings/")
        assert form.status_code == 200
        for name in ("split_train", "answers_test", "lease_minutes", "monitoring_threshold", "agreement_rule"):
            assert f'name="{name}"' in html(form), name
        data = _settings_data(project, split_train=70, split_validation=15, split_test=15, lease_minutes=45)
        response = client.post("/projects/demo/settings/", data)
        assert response.status_code == 302
        project.refresh_from_db()
        assert (project.split_train, project.split_test, project.lease_minutes) == (70, 15, 45)

    @pytest.mark.parametrize(
        ("changes", "message"),
        [
            ({"split_train": 70}, "add up to 90%"),
            ({"questions_pass1_cap": 21}, "less than or equal to 20"),
            ({"lease_minutes": 0}, "greater than or equal to 1"),
            ({"monitoring_threshold": 1.5}, "less than or equal to 1"),
            ({"answers_validation": 0}, "greater than or equal to 1"),
            ({"agreement_rule": "lenient"}, "Select a valid choice"),
            ({"lease_minutes": "soon"}, "Enter a whole number"),
        ],
    )
    def test_bad_settings_are_shown_not_500(self, client, lead, project, changes, message):
        login(client, lead)
        response = client.post("/projects/demo/settings/", _settings_data(project, **changes))
        assert response.status_code == 400
        assert message in html(response)
        project.refresh_from_db()
        assert (project.split_train, project.lease_minutes) == (80, 30)


def _settings_data(project, **changes):
    from annotation.services.projects import PROJECT_SETTINGS

    data = {}
    for name in PROJECT_SETTINGS:
        value = getattr(project, name)
        if isinstance(value, bool):
            if value:
                data[name] = "on"
            continue
        data[name] = value
    data.update(changes)
    return data


class TestGuidelines:
    def test_default_text_is_the_papers_rules(self, client, annotator):
        login(client, annotator)
        page = html(client.get("/projects/demo/guidelines/"))
        assert "Pre-filtering" in page and "No yes/no" in page and "<table>" in page

    def test_lead_edits_and_markdown_is_sanitised(self, client, lead, annotator, project):
        login(client, lead)
        text = (
            "# Our rules\n\n<script>alert(1)</script>\n\n[bad](javascript:alert(1))\n\n"
            "![ok](/api/projects/demo/screens/1/image/) ![no](https://evil.example/x.png)"
            " ![other](/api/projects/other/screens/1/image/)\n"
        )
        response = client.post("/projects/demo/guidelines/edit/", {"text": text})
        assert response.status_code == 302
        login(client, annotator)
        page = html(client.get("/projects/demo/guidelines/"))
        article = page[page.index('id="guidelines"') : page.index("</article>")]
        assert "<h1>Our rules</h1>" in article
        assert "<script" not in article and 'href="javascript' not in article
        assert 'src="/api/projects/demo/screens/1/image/"' in article
        assert "evil.example" not in page and "/api/projects/other/" not in page

    def test_empty_text_goes_back_to_the_default(self, client, lead, project):
        project.guidelines = "custom"
        project.save()
        login(client, lead)
        client.post("/projects/demo/guidelines/edit/", {"text": ""})
        project.refresh_from_db()
        assert project.guidelines == ""

    def test_too_long_is_an_error(self, client, lead):
        login(client, lead)
        response = client.post("/projects/demo/guidelines/edit/", {"text": "x" * 100_001})
        assert response.status_code == 400 and 'role="alert"' in html(response)

    def test_project_page_shows_them_once_to_a_new_member(self, client, annotator):
        login(client, annotator)
        assert 'id="guidelines-once"' in html(client.get("/projects/demo/"))
        assert 'id="guidelines-once"' not in html(client.get("/projects/demo/"))
        assert Membership.objects.get(user=annotator).guidelines_seen_at is not None

    def test_home_offers_them_until_read(self, client, annotator):
        login(client, annotator)
        assert "/projects/demo/guidelines/" in html(client.get("/"))
        client.get("/projects/demo/guidelines/")
        assert "/projects/demo/guidelines/" not in html(client.get("/"))


class TestActions:
    def test_not_answerable_start(self, client, lead, project):
        for _ in range(3):
            ScreenFactory(project=project, state=ScreenState.ANSWERING, split="train")
        login(client, lead)
        assert "Sample size" in html(client.get("/projects/demo/actions/"))
        response = client.post("/projects/demo/actions/not-answerable/", {"sample_size": "2"})
        assert response.status_code == 200 and "Sampled 2 of 2" in html(response)
        for bad in ("two", "0", "999999"):
            response = client.post("/projects/demo/actions/not-answerable/", {"sample_size": bad})
            assert response.status_code == 400 and 'role="alert"' in html(response), bad

    def test_the_not_answerable_counts_of_a_large_project_are_stored_and_an_action_counts_again(
        self, client, lead, project, settings
    ):
        # given a project at the size where whole-project figures are stored (they count every question)
        settings.SCREENQA_STORED_FIGURES_MIN_SCREENS = 3
        screens = [ScreenFactory(project=project, state=ScreenState.ANSWERING, split="train") for _ in range(3)]
        QuestionFactory(screen=screens[0])
        login(client, lead)
        first = html(client.get("/projects/demo/actions/"))
        assert 'id="na-counted"' in first and "of 1 questions" in first
        # when questions come in: a view reads the stored counts (with their time), no count of the questions
        QuestionFactory(screen=screens[1])
        with CaptureQueriesContext(connection) as queries:
            again = html(client.get("/projects/demo/actions/"))
        assert "of 1 questions" in again and 'id="na-counted"' in again
        assert not [q for q in queries.captured_queries if 'FROM "annotation_question"' in q["sql"]]
        # and an action shows the counts as they are now
        after = html(client.post("/projects/demo/actions/not-answerable/", {"sample_size": "1"}))
        assert "of 2 questions" in after and 'id="na-counted"' not in after

    def test_apps_a_page_at_a_time_and_found_by_package(self, client, lead, project, monkeypatch):
        from frontend.views import manage

        monkeypatch.setattr(manage, "ROWS_PER_PAGE", 2)
        for name in ("com.a", "com.b", "org.c"):
            AppFactory(project=project, package=name)
        login(client, lead)
        first = html(client.get("/projects/demo/actions/"))
        assert first.count("<tr data-app=") == 2 and 'data-app="com.a"' in first and "Page 1 of" in first
        second = html(client.get("/projects/demo/actions/?page=2"))
        assert 'data-app="org.c"' in second or 'data-app="com.b"' in second
        found = html(client.get("/projects/demo/actions/?q=org"))
        assert found.count("<tr data-app=") == 1 and 'data-app="org.c"' in found

    def test_mark_app_non_english(self, client, lead, project):
        app = AppFactory(project=project, package="com.hola")
        ScreenFactory(project=project, app=app)
        login(client, lead)
        response = client.post("/projects/demo/actions/non-english/", {"package": "com.hola"})
        assert response.status_code == 200 and "1 screen(s) excluded" in html(response)
        assert App.objects.get(pk=app.pk).non_english
        response = client.post("/projects/demo/actions/non-english/", {"package": "com.nope"})
        assert response.status_code == 400 and "App not found" in html(response)

    def test_declare_an_app_english_restores_its_screens(self, client, lead, project):
        # given an app the lead marked non-English, one of its screens further along
        app = AppFactory(project=project, package="com.hola")
        waiting = ScreenFactory(project=project, app=app)
        further = ScreenFactory(project=project, app=app, state=ScreenState.QUESTIONS_2)
        login(client, lead)
        client.post("/projects/demo/actions/non-english/", {"package": "com.hola"})
        page = html(client.get("/projects/demo/actions/"))
        row = page[page.index('data-app="com.hola"') :].split("</tr>")[0]
        assert "non-English" in row and "a lead" in row and "Declare English" in row
        assert "Mark non-English" not in row
        # when the lead declares it English
        response = client.post("/projects/demo/actions/non-english/", {"package": "com.hola", "english": "1"})
        # then its screens are back where they were, and the page says so
        assert response.status_code == 200
        assert "com.hola is English: 2 screen(s) restored (1 to prefilter, 1 to questions-2)" in html(response)
        assert Screen.objects.get(pk=waiting.pk).state == ScreenState.PREFILTER
        assert Screen.objects.get(pk=further.pk).state == ScreenState.QUESTIONS_2
        row = html(response)[html(response).index('data-app="com.hola"') :].split("</tr>")[0]
        assert ">English<" in row and "Mark non-English" in row and "Declare English" not in row
        # and a bad flag is a 400 with the field named
        response = client.post("/projects/demo/actions/non-english/", {"package": "com.hola", "english": "yes"})
        assert response.status_code == 400 and "english is 0 or 1" in html(response)

    def test_the_apps_language_votes_and_the_rule_are_shown(self, client, lead, project, annotator):
        app = AppFactory(project=project, package="com.votes")
        screen = ScreenFactory(project=project, app=app)
        assignment = Assignment.objects.create(
            project=project,
            stage="prefilter",
            screen=screen,
            annotator=annotator,
            status=AssignmentStatus.SUBMITTED,
            submitted_at=timezone.now(),
            lease_expires_at=timezone.now(),
        )
        PrefilterJudgment.objects.create(
            assignment=assignment, screen=screen, annotator=annotator, non_english_app=True, vh_out_of_sync=False
        )
        App.objects.filter(pk=app.pk).update(non_english=True, language_set_by="rule")
        login(client, lead)
        page = html(client.get("/projects/demo/actions/"))
        row = page[page.index('data-app="com.votes"') :].split("</tr>")[0]
        cells = [c.split(">", 1)[1].split("<")[0].strip() for c in row.split("<td")[1:]]
        assert cells[:5] == ["com.votes", "", "the rule", "1", "1"] and "non-English" in row

    def test_skips_and_notes(self, client, lead, project, leased, annotator):
        Assignment.objects.filter(pk=leased.pk).update(
            status=AssignmentStatus.SKIPPED, skip_reason="Blurry <b>shot</b>"
        )
        screen = ScreenFactory(project=project)
        judged = Assignment.objects.create(
            project=project,
            stage="prefilter",
            screen=screen,
            annotator=annotator,
            status=AssignmentStatus.SUBMITTED,
            submitted_at=timezone.now(),
            lease_expires_at=timezone.now(),
        )
        PrefilterJudgment.objects.create(
            assignment=judged,
            screen=screen,
            annotator=annotator,
            non_english_app=False,
            vh_out_of_sync=True,
            note="menu over the content",
        )
        login(client, lead)
        page = html(client.get("/projects/demo/skips/"))
        assert "Blurry &lt;b&gt;shot&lt;/b&gt;" in page and "menu over the content" in page and "annie" in page


class TestLeases:
    def test_free(self, client, lead, leased):
        login(client, lead)
        assert "annie" in html(client.get("/projects/demo/leases/"))
        assert client.post(f"/projects/demo/leases/{leased.pk}/", {"action": "free"}).status_code == 302
        assert Assignment.objects.get(pk=leased.pk).status == AssignmentStatus.RELEASED
        response = client.post(f"/projects/demo/leases/{leased.pk}/", {"action": "free"})
        assert response.status_code == 409 and "no longer held" in html(response)

    def test_reassign(self, client, lead, project, leased):
        bea = UserFactory(username="bea")
        MembershipFactory(project=project, user=bea)
        login(client, lead)
        response = client.post(f"/projects/demo/leases/{leased.pk}/", {"action": "reassign", "user": bea.pk})
        assert response.status_code == 302
        assert Assignment.objects.get(pk=leased.pk).annotator == bea
        for data, message in [
            ({"action": "reassign", "user": bea.pk}, "holds it already"),
            ({"action": "reassign", "user": "x"}, "Choose the member"),
            ({"action": "reassign", "user": lead.pk + 1000}, "Choose a member"),
            ({"action": "explode"}, "Choose free or reassign"),
        ]:
            response = client.post(f"/projects/demo/leases/{leased.pk}/", data)
            assert response.status_code == 400 and message in html(response), message

    def test_reassign_by_name_from_one_list_of_members(self, client, lead, project, leased):
        bea = UserFactory(username="bea")
        MembershipFactory(project=project, user=bea)
        login(client, lead)
        page = html(client.get("/projects/demo/leases/"))
        # one list of names for the page, filled as the lead types; no member is written into the page
        assert page.count('<datalist id="lease-members"') == 1 and "<select" not in page
        assert 'data-url="/projects/demo/leases/members/"' in page and "bea" not in page
        response = client.post(f"/projects/demo/leases/{leased.pk}/", {"action": "reassign", "username": "zed"})
        assert response.status_code == 400 and "Choose a member" in html(response)
        response = client.post(f"/projects/demo/leases/{leased.pk}/", {"action": "reassign", "username": "bea"})
        assert response.status_code == 302 and Assignment.objects.get(pk=leased.pk).annotator == bea

    def test_the_names_offered_hold_what_is_typed_and_stay_few(self, client, lead, project, other_lead, leased):
        for n in range(25):
            MembershipFactory(project=project, user=UserFactory(username=f"crowd-{n:02}"))
        UserFactory(username="crowd-outsider")  # not a member
        MembershipFactory(project=Project.objects.get(slug="other"), user=UserFactory(username="crowd-elsewhere"))
        login(client, lead)

        def names(query):
            response = client.get("/projects/demo/leases/members/", {"q": query})
            assert response.status_code == 200 and response["Content-Type"] == "application/json"
            return response.json()["members"]

        assert names("OWD-1") == [f"crowd-{n}" for n in range(10, 20)]  # any case, anywhere in the name
        assert names("crowd") == [f"crowd-{n:02}" for n in range(20)]  # the first 20, in name order
        assert names("") == sorted([lead.username, "annie", *(f"crowd-{n:02}" for n in range(25))])[:20]
        assert names("nobody") == [] and names("%") == [] and names("_") == []  # no wildcards
        assert names("  crowd-24 ") == ["crowd-24"]
        with CaptureQueriesContext(connection) as queries:
            names("crowd")
        assert len(queries) == 5, [q["sql"] for q in queries]  # session, user, project, lead, names

    def test_a_lease_of_another_project_is_404(self, client, other_lead, leased):
        login(client, other_lead)
        assert client.post(f"/projects/other/leases/{leased.pk}/", {"action": "free"}).status_code == 404


class TestProjectPage:
    def test_answers_stuck_and_drilldown(self, client, lead, project, annotator):
        # given validation questions by annie, needing 3 answers, with a pool of two besides her
        Membership.objects.filter(project=project).update(in_answer_pool=False)
        for name in ("p1", "p2"):
            MembershipFactory(project=project, user=UserFactory(username=name), in_answer_pool=True)
        screen = ScreenFactory(project=project, state=ScreenState.ANSWERING, split="validation")
        for position in range(2):
            QuestionFactory(
                screen=screen, author=annotator, position=position, state=QuestionState.ANSWERING, answers_needed=3
            )
        login(client, lead)
        page = html(client.get("/projects/demo/"))
        assert "2 validation questions need a third answerer other than their author" in page
        assert 'data-split="validation"' in page
        # when a third person joins the pool, nothing is stuck
        MembershipFactory(project=project, user=UserFactory(username="p3"), in_answer_pool=True)
        assert "need a third answerer" not in html(client.get("/projects/demo/"))

    def test_held_and_per_annotator_for_leads_only(self, client, lead, annotator, leased):
        login(client, lead)
        page = html(client.get("/projects/demo/"))
        assert 'id="people"' in page and 'data-username="annie"' in page
        assert "Questions, pass 1 1" in page
        login(client, annotator)
        assert 'id="people"' not in html(client.get("/projects/demo/"))
