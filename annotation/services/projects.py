"""Project settings changed by an operator (the admin edits the same fields)."""

from __future__ import annotations

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import AgreementRule, Project


def project_agreement_rule_set(*, slug: str, rule: str) -> Project:
    """Set the project's agreement rule (docs/postprocessing.md); the next post-processing run decides under it.

    ``ApplicationError`` for a rule that is not one of ``AgreementRule``, ``NotFoundError`` for an
    unknown project. One ``UPDATE`` of one column: concurrent edits of other settings are kept.
    """
    if rule not in AgreementRule.values:
        raise ApplicationError(
            f"Unknown agreement rule {rule!r}: use one of {', '.join(AgreementRule.values)}.", field="agreement_rule"
        )
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise NotFoundError(f"No project {slug!r}.")
    Project.objects.filter(pk=project.pk).update(agreement_rule=rule)
    project.agreement_rule = rule
    return project
