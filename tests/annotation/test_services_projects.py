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
