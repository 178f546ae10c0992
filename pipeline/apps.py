from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "pipeline"

    def ready(self) -> None:
        # Registers the job task under its name in every process, so that ``pipeline.jobs.queue`` can send it
        # by name (the worker's autodiscovery finds the same module; see annotation/celery.py).
        # Queue depth per project and stage for the metrics (annotation.observability), read when scraped.
        from annotation import observability
        from pipeline.jobs import tasks  # noqa: F401
        from pipeline.observability import queue_depths

        observability.queue_depth_provider = queue_depths
