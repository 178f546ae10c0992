"""Accounts a lead creates for their project, and the credentials of a bulk creation waiting for the
lead's one download.

Two kinds of account (docs/leads.md, "Accounts and credentials"):

* a **personal account** belongs to its person: they chose its password (an invitation, or the site
  admin), and its API token is theirs alone (their account page). A lead may invite it into the project
  but never sees, receives or replaces a credential of it.
* a **project account** (``ProjectAccount``) was created by a lead of one project for a crowd worker. Its
  username is ``<project slug>/<name>``, a name no personal account can have (``/`` is not allowed in
  one), so creating it never reveals whether some other account exists. It can only ever be a member of
  that project (``annotation.services.members.membership_create`` refuses any other), and it is never a
  site admin or staff: its password and token work in that project only, so its lead may hand them out,
  show the token and replace either.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .jobs import MemberJob
from .projects import Project

# The separator between a project account's project and name: never allowed in a personal username.
PROJECT_ACCOUNT_SEPARATOR = "/"


class ProjectAccount(models.Model):
    """The account ``user`` was created by a lead of ``project``, for ``project`` only."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="project_account"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="accounts")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"project account {self.user_id} of {self.project_id}"


class PendingCredential(models.Model):
    """A new project account's password and token, written in the same transaction as the account by a
    bulk creation (``MemberJob``) and deleted by the lead's one download: a worker killed mid-way never
    leaves an account whose password nobody can see."""

    job = models.ForeignKey(MemberJob, on_delete=models.CASCADE, related_name="credentials")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    username = models.CharField(max_length=150)
    password = models.CharField(max_length=128)
    token = models.CharField(max_length=40)
    line = models.PositiveIntegerField(help_text="the row of the request it came from (the download's order)")

    class Meta:
        ordering = ["line"]

    def __str__(self) -> str:
        return f"pending credential of {self.username}"
