import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings.local")

app = Celery("screenqa")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["pipeline"])
