"""Row locks of the domain (``annotation/lock_objects.py``): what they return and refuse."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.transaction import TransactionManagementError

from annotation.lock_objects import assignment_lock, screen_lock, user_lock
from annotation.models import Assignment, Screen
from tests.factories import ScreenFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True)
def test_the_user_lock_needs_a_transaction_and_an_existing_user():
    user = UserFactory()
    with pytest.raises(TransactionManagementError):
        user_lock(user_id=user.pk)
    with transaction.atomic():
        user_lock(user_id=user.pk)
        with pytest.raises(type(user).DoesNotExist):
            user_lock(user_id=-1)


@pytest.mark.django_db(transaction=True)
def test_the_lease_lock_turns_off_the_wal_flush_and_keeps_plans_for_its_transaction_only():
    user = UserFactory()

    def settings() -> tuple[str, str]:
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            flush = str(cursor.fetchone()[0])
            cursor.execute("SHOW plan_cache_mode")
            return flush, str(cursor.fetchone()[0])

    before = settings()
    with transaction.atomic():
        user_lock(user_id=user.pk, leasing=True)
        assert settings() == ("off", "force_generic_plan")
    assert settings() == before == ("on", "auto")  # the next transaction has the server's settings
    with transaction.atomic():
        user_lock(user_id=user.pk)
        assert settings() == before


def test_row_locks_load_the_row_and_leave_out_the_view_hierarchy_on_request():
    screen = ScreenFactory(vh={"activity": {"root": {"class": "X"}}})
    with transaction.atomic():
        light = screen_lock(screen_id=screen.pk, with_vh=False)
        assert (light.pk, light.rico_id, light.state) == (screen.pk, screen.rico_id, screen.state)
        assert "vh" in light.get_deferred_fields()
        assert light.vh == {"activity": {"root": {"class": "X"}}}  # loads on access
        full = screen_lock(screen_id=screen.pk)
        assert not full.get_deferred_fields() and full.vh == light.vh
        with pytest.raises(Screen.DoesNotExist):
            screen_lock(screen_id=-1)
        with pytest.raises(Assignment.DoesNotExist):
            assignment_lock(assignment_id=-1)


def test_row_locks_lock_their_own_row_only():
    # given a screen and a question, whose models order by related fields (project, screen)
    from django.test.utils import CaptureQueriesContext

    from annotation.lock_objects import question_lock
    from annotation.models import Question

    screen = ScreenFactory()
    question = Question.objects.create(screen=screen, source="questions-1", position=0, text="Q?")
    # when both are locked
    with transaction.atomic(), CaptureQueriesContext(connection) as ctx:
        screen_lock(screen_id=screen.pk, with_vh=False)
        question_lock(question_id=question.pk)
    # then neither statement joins (and so locks) the project or screen rows
    locks = [q["sql"] for q in ctx.captured_queries if "FOR UPDATE" in q["sql"]]
    assert len(locks) == 2
    assert not any("JOIN" in sql for sql in locks), locks
