"""Site pages: login, home, project (funnel, screens, import form), screen, import job progress."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from annotation.models import ImportJob, QuestionSource, ScreenState
from annotation.models.work import Question
from tests.conftest import login
from tests.factories import (
    PASSWORD,
    CandidateFactory,
    MembershipFactory,
    ProjectFactory,
    ScreenFactory,
    UserFactory,
)
from tests.pipeline.ingest.test_jobs import synthetic_zip

pytestmark = pytest.mark.django_db


def html(response) -> str:
    return response.content.decode()


@pytest.fixture
def funnel_project(project):
    """Ten screens: 3 waiting, 2 excluded (1 non-English, 1 out of sync), 5 eligible of which 2 have questions."""
    for _ in range(3):
        ScreenFactory(project=project)
    ScreenFactory(project=project, state=ScreenState.EXCLUDED, exclusion_reason="non_english")
    ScreenFactory(project=project, state=ScreenState.EXCLUDED, exclusion_reason="vh_out_of_sync")
    eligible = [ScreenFactory(project=project, state=ScreenState.QUESTIONS_1) for _ in range(3)]
    eligible += [ScreenFactory(project=project, state=ScreenState.NO_QUESTIONS) for _ in range(2)]
    for screen in eligible[:2]:
        for position in range(2):
            Question.objects.create(
                screen=screen, source=QuestionSource.PASS_1, position=position, text=f"Q{position}?"
            )
    return project


class TestLogin:
    def test_anonymous_pages_redirect_to_login(self, client, project):
        job = ImportJob.objects.create(project=project, source="imports/x.zip", source_kind="zip")
        for url in ["/", "/projects/demo/", "/projects/demo/screens/1/", f"/imports/{job.pk}/"]:
            response = client.get(url)
            assert response.status_code == 302, url
            assert response["Location"].startswith("/login/?next="), url

    def test_log_in_then_log_out(self, client, annotator):
        page = client.get("/login/")
        assert page.status_code == 200
        assert 'name="username"' in html(page) and 'name="password"' in html(page)
        response = client.post("/login/", {"username": "annie", "password": PASSWORD})
        assert response.status_code == 302 and response["Location"] == "/"
        assert client.get("/").status_code == 200
        assert client.post("/logout/").status_code == 302
        assert client.get("/").status_code == 302

    def test_wrong_password_shows_an_error(self, client, annotator):
        response = client.post("/login/", {"username": "annie", "password": "nope"})
        assert response.status_code == 200
        assert 'role="alert"' in html(response)


class TestHome:
    def test_lists_only_my_projects_with_role_counts_and_links(self, client, funnel_project, lead):
        # given a lead of "demo" who also annotates another project, and a project they are not in
        other = ProjectFactory(slug="beta", name="Beta set")
        MembershipFactory(project=other, user=lead, role="annotator")
        ProjectFactory(slug="secret", name="Secret set")
        login(client, lead)
        # when they open the home page
        page = html(client.get("/"))
        # then both their projects are listed with role, counts and links, the other one is not
        assert "Secret set" not in page
        rows = {
            m.group(1): m.group(0)
            for m in re.finditer(r'<tr>\s*<td><a href="/projects/([\w-]+)/">.*?</tr>', page, re.S)
        }
        assert set(rows) == {"demo", "beta"}
        assert "badge-lead" in rows["demo"] and "badge-annotator" in rows["beta"]
        counts = re.findall(r'<td class="num">(\d+)</td>', rows["demo"])
        assert counts == ["10", "5", "4"]  # screens, eligible, questions
        assert 'href="/projects/demo/work/"' in rows["demo"]
        assert "Start working" in rows["beta"]

    def test_site_admin_sees_all_projects(self, client, project):
        ProjectFactory(slug="beta")
        login(client, UserFactory(username="root", is_superuser=True))
        page = html(client.get("/"))
        assert "/projects/demo/" in page and "/projects/beta/" in page and "badge-admin" in page

    def test_query_count_does_not_grow_with_projects(self, client, django_assert_max_num_queries):
        user = UserFactory(username="many")
        for _ in range(15):
            MembershipFactory(user=user, project=ProjectFactory())
        login(client, user)
        with django_assert_max_num_queries(4):  # session, user, projects (one query with subqueries)
            assert client.get("/").status_code == 200

    def test_user_text_is_escaped(self, client):
        user = UserFactory(username="eve")
        MembershipFactory(user=user, project=ProjectFactory(slug="x", name="<script>alert(1)</script>"))
        login(client, user)
        page = html(client.get("/"))
        assert "<script>alert(1)</script>" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


class TestProjectPage:
    def test_member_sees_the_funnel_as_numbers_and_bars(self, client, funnel_project, annotator):
        login(client, annotator)
        response = client.get("/projects/demo/")
        assert response.status_code == 200
        page = html(response)
        numbers = dict(re.findall(r'data-step="([\w-]+)">(\d+)<', page))
        assert numbers == {
            "imported": "10",
            "non-english": "1",
            "out-of-sync": "1",
            "eligible": "5",
            "with-questions": "2",
            "with-answered": "0",
            "waiting-prefilter": "3",
        }
        # the reasons read as words, not codes
        assert "non-English app 1" in page and "VH out of sync 1" in page and "non_english" not in page
        widths = [float(w) for w in re.findall(r'<rect x="200" y="4" width="([\d.]+)"', page)]
        assert widths == [300.0, 30.0, 30.0, 150.0, 60.0, 0.0]  # proportional to 10, 1, 1, 5, 2, 0
        # the annotator does not get the lead's import form
        assert "Import screens" not in page and "/projects/demo/imports/" not in page

    def test_screens_are_listed_and_filterable_by_state(self, client, funnel_project, annotator):
        login(client, annotator)
        everything = html(client.get("/projects/demo/"))
        excluded = html(client.get("/projects/demo/?state=excluded"))
        assert everything.count("/projects/demo/screens/") == 10
        assert excluded.count("/projects/demo/screens/") == 2
        # an unknown state is ignored rather than failing
        assert client.get("/projects/demo/?state=bogus").status_code == 200

    def test_lead_sees_the_import_form_and_past_jobs(self, client, project, lead):
        ImportJob.objects.create(project=project, created_by=lead, source="imports/a.zip", source_kind="zip")
        login(client, lead)
        page = html(client.get("/projects/demo/"))
        assert 'action="/projects/demo/imports/"' in page and 'enctype="multipart/form-data"' in page
        assert "Past imports" in page and "/imports/" in page

    def test_lead_reaches_the_release_pages_and_annotators_do_not_see_them(self, client, project, lead, annotator):
        login(client, lead)
        page = html(client.get("/projects/demo/"))
        for url in (
            "/projects/demo/release/postprocess/",
            "/projects/demo/release/short-answers/",
            "/projects/demo/exports/",
        ):
            assert f'href="{url}"' in page
            assert client.get(url, follow=True).status_code == 200
        client.logout()
        login(client, annotator)
        page = html(client.get("/projects/demo/"))
        assert "/release/postprocess/" not in page and "/exports/" not in page

    def test_outsider_and_member_of_another_project_get_404(self, client, project, outsider):
        other = UserFactory(username="olga")
        MembershipFactory(user=other, project=ProjectFactory(slug="other"), role="lead")
        for user in (outsider, other):
            login(client, user)
            assert client.get("/projects/demo/").status_code == 404

    def test_query_count_is_bounded(self, client, funnel_project, lead, django_assert_max_num_queries):
        login(client, lead)
        with django_assert_max_num_queries(13):  # (one: whether the project is small enough to count live)
            assert client.get("/projects/demo/").status_code == 200


class TestScreenPage:
    def test_member_sees_the_overlay_and_candidates(self, client, project, annotator):
        screen = ScreenFactory(project=project, rico_id="31")
        CandidateFactory(screen=screen, vh_index=3, text="<b>Buy</b>")
        login(client, annotator)
        page = html(client.get("/projects/demo/screens/31/"))
        assert 'src="/api/projects/demo/screens/31/overlay/"' in page
        assert 'href="/api/projects/demo/screens/31/image/"' in page
        assert "&lt;b&gt;Buy&lt;/b&gt;" in page

    @pytest.mark.parametrize("n_candidates", [1, 200])
    def test_query_count_does_not_grow_with_candidates(
        self, client, project, annotator, n_candidates, django_assert_max_num_queries
    ):
        screen = ScreenFactory(project=project, rico_id="40")
        CandidateFactory.create_batch(n_candidates, screen=screen)
        login(client, annotator)
        with django_assert_max_num_queries(5):  # session, user, project, screen, candidates
            response = client.get("/projects/demo/screens/40/")
        assert html(response).count('<td class="num">') == n_candidates

    def test_outsider_404_and_unknown_screen_404(self, client, project, annotator, outsider):
        ScreenFactory(project=project, rico_id="31")
        login(client, annotator)
        assert client.get("/projects/demo/screens/32/").status_code == 404
        login(client, outsider)
        assert client.get("/projects/demo/screens/31/").status_code == 404


class TestImportPages:
    def test_lead_starts_an_import_and_follows_it_to_the_summary(
        self, client, project, lead, django_capture_on_commit_callbacks
    ):
        login(client, lead)
        # when the lead submits the form with a zip (tasks are eager in tests: it runs on commit)
        zip_file = SimpleUploadedFile("batch.zip", synthetic_zip(["1", "2"], broken=["<bad>"]))
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post("/projects/demo/imports/", {"file": zip_file, "prefix": "", "device_size": ""})
        # then they land on the job page, which shows the summary with the rejection reasons
        job = ImportJob.objects.get()
        assert response.status_code == 302 and response["Location"] == f"/imports/{job.pk}/"
        page = html(client.get(response["Location"]))
        assert 'data-summary="imported">2<' in page
        assert 'data-summary="rejected">1<' in page
        assert "&lt;bad&gt;" in page  # the rejected file's name, escaped
        assert "hx-trigger" not in page  # finished: no more polling

    def test_a_running_job_polls_its_progress_partial_every_second(self, client, project, lead):
        job = ImportJob.objects.create(
            project=project, source="imports/a.zip", source_kind="zip", status="running", processed=3, total=12
        )
        login(client, lead)
        page = html(client.get(f"/imports/{job.pk}/"))
        assert f'hx-get="/imports/{job.pk}/progress/"' in page and 'hx-trigger="every 1s"' in page
        assert '<progress max="12" value="3">' in page
        assert '<meta http-equiv="refresh"' in page  # inside <noscript>: works without JavaScript
        partial = client.get(f"/imports/{job.pk}/progress/", HTTP_HX_REQUEST="true")
        assert partial.status_code == 200
        body = html(partial)
        assert body.lstrip().startswith(f'<div class="job" id="job-import-{job.pk}"')
        assert "<html" not in body and "3 of 12 screens" in body

    def test_progress_partial_polled_every_second_runs_few_queries(
        self, client, project, lead, django_assert_max_num_queries
    ):
        job = ImportJob.objects.create(project=project, source="imports/a.zip", source_kind="zip", status="running")
        login(client, lead)
        # session, user, job (with project), project as member, lead role
        with django_assert_max_num_queries(5):
            assert client.get(f"/imports/{job.pk}/progress/").status_code == 200

    def test_failed_job_shows_its_error(self, client, project, lead):
        job = ImportJob.objects.create(
            project=project, source="imports/a.zip", source_kind="zip", status="failed", error="ApplicationError: <x>"
        )
        login(client, lead)
        page = html(client.get(f"/imports/{job.pk}/"))
        assert "The import failed." in page and "ApplicationError: &lt;x&gt;" in page

    def test_failed_job_offers_run_again_which_finishes_it(
        self, client, project, lead, django_capture_on_commit_callbacks
    ):
        from django.core.files.base import ContentFile
        from django.core.files.storage import default_storage

        source = default_storage.save("imports/r.zip", ContentFile(synthetic_zip(["1"])))
        job = ImportJob.objects.create(project=project, source=source, source_kind="zip", status="failed", error="x")
        login(client, lead)
        page = html(client.get(f"/imports/{job.pk}/"))
        assert f'action="/imports/{job.pk}/retry/"' in page
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(f"/imports/{job.pk}/retry/")
        assert response.status_code == 302
        page = html(client.get(response["Location"]))
        assert 'data-summary="imported">1<' in page and "/retry/" not in page

    def test_run_again_on_a_done_job_explains_why_not(self, client, project, lead):
        job = ImportJob.objects.create(project=project, source="imports/a.zip", source_kind="zip", status="done")
        login(client, lead)
        response = client.post(f"/imports/{job.pk}/retry/", follow=True)
        assert "This import job is already done." in html(response)

    def test_bad_input_redisplays_the_form_with_the_error_and_loses_nothing_typed(self, client, project, lead):
        login(client, lead)
        response = client.post("/projects/demo/imports/", {"prefix": "some/where", "device_size": "huge"})
        assert response.status_code == 400
        page = html(response)
        assert "Device size must look like" in page
        assert 'value="some/where"' in page and 'value="huge"' in page
        assert ImportJob.objects.count() == 0

    def test_annotator_403_outsider_404(self, client, project, annotator, outsider):
        job = ImportJob.objects.create(project=project, source="imports/a.zip", source_kind="zip")
        zip_file = SimpleUploadedFile("batch.zip", synthetic_zip(["1"]))
        for user, status in [(annotator, 403), (outsider, 404)]:
            login(client, user)
            assert client.post("/projects/demo/imports/", {"file": zip_file}).status_code == status
            assert client.get(f"/imports/{job.pk}/").status_code == status
            assert client.get(f"/imports/{job.pk}/progress/").status_code == status
            assert client.post(f"/imports/{job.pk}/retry/").status_code == status
        assert ImportJob.objects.count() == 1


def test_pages_load_only_assets_served_by_the_app(client, project, lead):
    pages = [html(client.get("/login/"))]
    login(client, lead)
    pages += [html(client.get(url)) for url in ["/", "/projects/demo/"]]
    for page in pages:
        refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", page)
        for ref in refs:
            assert ref.startswith(("/", "?", "#")) and not ref.startswith("//"), ref
        assert "/static/frontend/app.css" in refs
        assert any(ref.startswith("/static/django_htmx/htmx") for ref in refs)  # htmx from the package, no CDN


class TestProjectPageAtScale:
    """A project of ``SCREENQA_STORED_FIGURES_MIN_SCREENS`` screens or more: the funnel and the per-annotator
    counts come from the stored snapshot (``pipeline.analytics.stored``), the leases held now live."""

    @pytest.fixture
    def stored(self, settings, funnel_project):
        settings.SCREENQA_STORED_FIGURES_MIN_SCREENS = 5  # the funnel project has 10
        return funnel_project

    def test_a_small_project_is_counted_on_each_view(self, client, funnel_project, lead):
        login(client, lead)
        assert 'id="counted"' not in html(client.get("/projects/demo/"))
        ScreenFactory(project=funnel_project, rico_id="900", state=ScreenState.PREFILTER)
        assert 'data-step="imported">11<' in html(client.get("/projects/demo/"))

    def test_the_counts_are_stored_with_their_time_and_leases_held_are_live(self, client, stored, lead, annotator):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        from annotation.models import Assignment

        login(client, lead)
        first = html(client.get("/projects/demo/"))
        assert 'id="counted"' in first and "Counted at" in first and 'data-step="imported">10<' in first
        # new screens and a lease taken since: the counts wait for the snapshot, the lease shows at once
        ScreenFactory(project=stored, rico_id="900", state=ScreenState.PREFILTER)
        screen = stored.screens.filter(state=ScreenState.QUESTIONS_1).first() or stored.screens.first()
        Assignment.objects.create(
            project=stored,
            screen=screen,
            stage="questions-1",
            annotator=annotator,
            status="leased",
            lease_expires_at=timezone.now() + timedelta(minutes=30),
        )
        with CaptureQueriesContext(connection) as queries:
            page = html(client.get("/projects/demo/"))
        assert 'data-step="imported">10<' in page and 'data-username="annie"' in page
        assert "Questions, pass 1 1" in page
        # no aggregate over the project's questions, answers or assignments: the live leases only, and the
        # page of screens listed (LIMIT)
        heavy = [
            q["sql"]
            for q in queries
            if "LIMIT" not in q["sql"]
            and (
                ('"annotation_question"' in q["sql"] or '"annotation_answer"' in q["sql"])
                or ('"annotation_assignment"' in q["sql"] and "lease_expires_at" not in q["sql"])
            )
        ]
        assert not heavy, heavy

    def test_old_counts_are_counted_again_by_a_job(
        self, client, stored, lead, annotator, settings, django_capture_on_commit_callbacks
    ):
        from annotation.models import ReleaseJob

        login(client, annotator)
        client.get("/projects/demo/")
        ScreenFactory(project=stored, rico_id="900", state=ScreenState.PREFILTER)
        settings.SCREENQA_STORED_FIGURES_MAX_AGE = 0
        with django_capture_on_commit_callbacks(execute=True):
            page = html(client.get("/projects/demo/"))
        assert "being counted again now" in page and 'data-step="imported">10<' in page
        job = ReleaseJob.objects.get(project=stored, kind="progress-figures")
        assert job.status == "done" and job.created_by is None  # nobody's job: an annotator's view queued it
        settings.SCREENQA_STORED_FIGURES_MAX_AGE = 300
        assert 'data-step="imported">11<' in html(client.get("/projects/demo/"))
