"""Bulk rows for the query-plan tests (``EXPLAIN`` on PostgreSQL): thousands of screens or questions in one
``INSERT ... SELECT`` each, copied from one made by the factories, so that a plan is checked against as
many rows as a ScreenQA-size project holds around the few the statement must read."""

from __future__ import annotations

from django.db import connection


def clone_screens(template_id: int, count: int, *, project_id: int, state: str, sampled: bool = False) -> None:
    """``count`` copies of a screen in one statement, with random keys (set-based: fast)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO annotation_screen (project_id, app_id, rico_id, activity_name, image, width, height, vh,
                device_width, device_height, content_sha256, overlay, state, exclusion_reason, excluded_from,
                split, not_answerable_sampled, imported_at, queue_key)
            SELECT %s, s.app_id, s.rico_id || '-' || %s || '-' || g, s.activity_name, s.image, s.width, s.height,
                '{}'::jsonb, s.device_width, s.device_height, s.content_sha256, s.overlay, %s,
                CASE WHEN %s = 'excluded' THEN 'rule' ELSE '' END, '', 'train', %s, s.imported_at,
                floor(random() * 2147483648)::integer
            FROM annotation_screen s, generate_series(1, %s) g
            WHERE s.id = %s
            """,
            [project_id, state, state, state, sampled, count, template_id],
        )


def clone_questions(template_id: int, screen_state: str, project_id: int, state: str) -> None:
    """One question per screen of ``project_id`` in ``screen_state``, in ``state``."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO annotation_question (screen_id, author_id, origin_id, source, position, text, final_text,
                state, answers_needed, answers_done, drop_reason, dropped_from, withdrawn_by_id, flag_reason,
                flagged_by_id, agreement, short_answers, short_answers_source, short_answers_reviewed_by_id,
                created_at, queue_key)
            SELECT s.id, NULL, NULL, q.source, 0, q.text, '', %s, q.answers_needed, q.answers_needed, '', '', NULL,
                '', NULL, '', '[]'::jsonb, '', NULL, q.created_at, floor(random() * 2147483648)::integer
            FROM annotation_screen s, annotation_question q
            WHERE s.project_id = %s AND s.state = %s AND q.id = %s
                AND NOT EXISTS (SELECT 1 FROM annotation_question x WHERE x.screen_id = s.id)
            """,
            [state, project_id, screen_state, template_id],
        )


def add_assignments(
    *, project_id: int, stage: str, annotator_id: int, status: str, units: str, unit_column: str, live: bool
) -> int:
    """One assignment of ``annotator_id`` per unit that the SQL ``units`` (``SELECT id ...``) lists, in one
    statement: ``unit_column`` names it (``screen_id``; ``question_id`` with its screen). ``live``: a lease
    that runs another hour, else one that ran out a day ago. Returns how many were made."""
    screen = (
        "u.id" if unit_column == "screen_id" else "(SELECT q.screen_id FROM annotation_question q WHERE q.id = u.id)"
    )
    question = "NULL" if unit_column == "screen_id" else "u.id"
    expires = "now() + interval '1 hour'" if live else "now() - interval '1 day'"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO annotation_assignment (project_id, stage, screen_id, question_id, annotator_id, status,
                lease_expires_at, draft, submission, skip_reason, created_at, updated_at, submitted_at, attempt,
                purpose, review_state, review_double)
            SELECT %s, %s, {screen}, {question}, %s, %s, {expires}, '{{}}'::jsonb, NULL, '', now(), now(),
                CASE WHEN %s = 'submitted' THEN now() END, 0, 'work', '', false
            FROM ({units}) u
            """,
            [project_id, stage, annotator_id, status, status],
        )
        return cursor.rowcount
