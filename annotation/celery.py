import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings.local")

app = Celery("screenqa")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The one job task lives in pipeline/jobs/tasks.py.
app.autodiscover_tasks(["pipeline.jobs"], related_name="tasks")
