"""One job lifecycle (``annotation.models.jobs.Job``): import and release jobs share its fields.

* ``ImportJob.summary`` becomes ``result`` (the name every job uses for what its work returned);
* ``attempts`` (the claims so far) and ``heartbeat_at`` (the last sign of life) are new; existing rows
  take their last update as their heartbeat, so a job left running by a dead worker is stale at once;
* release jobs get the progress check import jobs had; rows that broke it (a total counted before
  more questions arrived) take their processed count as their total first.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def heartbeats_from_updates(apps, schema_editor):
    for name in ("ImportJob", "ReleaseJob"):
        apps.get_model("annotation", name).objects.update(heartbeat_at=F("updated_at"))


def release_progress_fixed(apps, schema_editor):
    ReleaseJob = apps.get_model("annotation", "ReleaseJob")
    ReleaseJob.objects.filter(total__gt=0, processed__gt=F("total")).update(total=F("processed"))
    if schema_editor.connection.vendor == "postgresql":
        # The updates queued the deferred foreign-key checks; run them now, or PostgreSQL refuses the
        # ALTER TABLE that adds the constraint in this same transaction.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_queue_ordered_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameField(model_name="importjob", old_name="summary", new_name="result"),
        migrations.AlterField(
            model_name="importjob",
            name="result",
            field=models.JSONField(blank=True, default=dict, help_text="what the work returned; empty until done"),
        ),
        migrations.AlterField(
            model_name="releasejob",
            name="result",
            field=models.JSONField(blank=True, default=dict, help_text="what the work returned; empty until done"),
        ),
        migrations.AddField(
            model_name="importjob",
            name="attempts",
            field=models.PositiveIntegerField(default=0, help_text="runs claimed so far"),
        ),
        migrations.AddField(
            model_name="releasejob",
            name="attempts",
            field=models.PositiveIntegerField(default=0, help_text="runs claimed so far"),
        ),
        migrations.AddField(
            model_name="importjob",
            name="heartbeat_at",
            field=models.DateTimeField(default=django.utils.timezone.now, help_text="last sign of life"),
        ),
        migrations.AddField(
            model_name="releasejob",
            name="heartbeat_at",
            field=models.DateTimeField(default=django.utils.timezone.now, help_text="last sign of life"),
        ),
        migrations.RunPython(heartbeats_from_updates, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="importjob",
            name="created_by",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL
            ),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="error",
            field=models.TextField(blank=True, help_text="why the last run failed"),
        ),
        migrations.AlterField(
            model_name="releasejob",
            name="error",
            field=models.TextField(blank=True, help_text="why the last run failed"),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="project",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="annotation.project"),
        ),
        migrations.AlterField(
            model_name="releasejob",
            name="project",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="annotation.project"),
        ),
        migrations.RunPython(release_progress_fixed, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="releasejob",
            constraint=models.CheckConstraint(
                condition=models.Q(("processed__lte", models.F("total")), ("total", 0), _connector="OR"),
                name="releasejob_progress",
            ),
        ),
    ]
