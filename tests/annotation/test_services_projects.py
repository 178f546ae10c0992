"""annotation.services.projects: settings an operator changes."""

from __future__ import annotations

import pytest

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import Project
from annotation.services.projects import project_agreement_rule_set

pytestmark = pytest.mark.django_db


def test_agreement_rule_set_changes_only_that_setting(project):
    # given a project whose box setting another operator changed meanwhile
    Project.objects.filter(pk=project.pk).update(agreement_use_boxes=True)
    # when the rule is set
    returned = project_agreement_rule_set(slug=project.slug, rule="strict")
    # then the rule is stored and the other setting kept
    project.refresh_from_db()
    assert (returned.agreement_rule, project.agreement_rule, project.agreement_use_boxes) == ("strict", "strict", True)


def test_agreement_rule_set_refuses_unknown_rules_and_projects(project):
    with pytest.raises(ApplicationError, match="Unknown agreement rule") as info:
        project_agreement_rule_set(slug=project.slug, rule="lenient")
    assert info.value.field == "agreement_rule"
    with pytest.raises(NotFoundError):
        project_agreement_rule_set(slug="nope", rule="strict")


class TestProjectCreateAndSettings:
    def test_only_site_admins_create(self, lead):
        from annotation.exceptions import PermissionDeniedError
        from annotation.services.projects import project_create

        with pytest.raises(PermissionDeniedError):
            project_create(user=lead, slug="new", name="New")
        assert not Project.objects.filter(slug="new").exists()

    def test_create_uses_the_papers_defaults_and_refuses_a_taken_slug(self, project):
        from annotation.services.projects import project_create
        from tests.factories import UserFactory

        admin = UserFactory(username="root", is_superuser=True)
        created = project_create(user=admin, slug="new", name="New")
        assert (created.questions_pass1_cap, created.answers_train, created.not_answerable_target) == (5, 1, 0.10)
        with pytest.raises(ApplicationError) as info:
            project_create(user=admin, slug="demo", name="Again")
        assert info.value.field == "slug"
        with pytest.raises(ApplicationError, match="Unknown settings"):
            project_create(user=admin, slug="x", name="X", owner="me")

    def test_settings_update_checks_the_constraints_and_writes_only_what_changed(self, project):
        from annotation.services.projects import project_settings_update

        with pytest.raises(ApplicationError):
            project_settings_update(project=project, split_train=50)  # 50 + 10 + 10 != 100
        with pytest.raises(ApplicationError):
            project_settings_update(project=project, questions_pass1_cap=25)
        fresh = Project.objects.get(pk=project.pk)
        Project.objects.filter(pk=project.pk).update(lease_minutes=45)  # another lead, meanwhile
        project_settings_update(project=fresh, split_train=60, split_validation=20, split_test=20)
        stored = Project.objects.get(pk=project.pk)
        assert (stored.split_train, stored.split_test, stored.lease_minutes) == (60, 20, 45)
        with pytest.raises(ApplicationError, match="fixed when the project is created") as info:
            project_settings_update(project=fresh, slug="moved")
        assert info.value.field == "slug"


class TestSettingsUpdateChecks:
    def test_a_change_of_splits_is_checked_against_the_splits_as_stored_now(self, project):
        from annotation.services.projects import project_settings_update

        # given a lead's copy of the project (80/10/10), and another lead who moved 10 points from
        # train to validation meanwhile (70/20/10)
        stale = Project.objects.get(pk=project.pk)
        project_settings_update(project=project, split_train=70, split_validation=20)
        # when the first lead, from the stale copy, moves 10 points from train to test (70/10/20 in
        # their copy, which adds up: it used to pass and fail in the database, a 500)
        with pytest.raises(ApplicationError, match="add up to 110%") as info:
            project_settings_update(project=stale, split_train=70, split_test=20)
        # then it is refused on the splits as they are (70 + 20 + 20), and nothing is written
        assert info.value.field == "split_train" and "70% + 20% + 20%" in info.value.message
        stored = Project.objects.get(pk=project.pk)
        assert (stored.split_train, stored.split_validation, stored.split_test) == (70, 20, 10)

    @pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
    def test_a_number_that_is_not_finite_is_refused_by_the_model(self, project, value):
        from annotation.services.projects import project_settings_update

        with pytest.raises(ApplicationError, match="finite") as info:
            project_settings_update(project=project, control_rate=value)
        assert info.value.field == "control_rate"
        assert Project.objects.get(pk=project.pk).control_rate == 0.10

    def test_create_refuses_a_setting_outside_its_range(self, project):
        from annotation.services.projects import project_create
        from tests.factories import UserFactory

        admin = UserFactory(username="root", is_superuser=True)
        with pytest.raises(ApplicationError, match="less than or equal to 1440") as info:
            project_create(user=admin, slug="new", name="New", lease_minutes=30000)
        assert info.value.field == "lease_minutes" and not Project.objects.filter(slug="new").exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_changes_of_the_splits_never_break_their_sum():
    # given leads who all read the project (80/10/10) and then change the splits at once, each
    # change adding up on its own copy but not together with the others
    from annotation.services.projects import project_settings_update
    from tests.factories import ProjectFactory
    from tests.pipeline.test_concurrency import run_threads

    project = ProjectFactory(slug="race")
    changes = [{"split_train": 70, "split_validation": 20}, {"split_train": 70, "split_test": 20}] * 6
    outcomes: list[str] = []

    def change(copy: Project, fields: dict) -> None:
        try:
            project_settings_update(project=copy, **fields)
            outcomes.append("saved")
        except ApplicationError:
            outcomes.append("refused")

    copies = [Project.objects.get(pk=project.pk) for _ in changes]
    # when they save at the same moment
    errors = run_threads([lambda c=c, f=f: change(c, f) for c, f in zip(copies, changes, strict=True)])
    # then each was saved or refused with a clear error (never a database error), and the splits add up
    assert errors == [] and len(outcomes) == len(changes) and "saved" in outcomes
    stored = Project.objects.get(pk=project.pk)
    assert stored.split_train + stored.split_validation + stored.split_test == 100
