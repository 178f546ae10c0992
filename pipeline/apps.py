from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "pipeline"

    def ready(self) -> None:
        # Registers the job task under its name in every process, so that ``pipeline.jobs.queue`` can send it
        # by name (the worker's autodiscovery finds the same module; see annotation/celery.py).
        # Queue depth per project and stage for the metrics (annotation.observability), read when scraped.
        # Every kind of job, installed in the jobs' registry (``pipeline.kinds``); and quality control's
        # receivers of what the stages report (``pipeline.quality.receivers``).
        from annotation import observability
        from pipeline import kinds  # noqa: F401
        from pipeline.jobs import tasks  # noqa: F401
        from pipeline.observability import queue_depths
        from pipeline.quality import receivers  # noqa: F401

        observability.queue_depth_provider = queue_depths
