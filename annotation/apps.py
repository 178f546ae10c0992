from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from annotation import checks, observability  # noqa: F401  (checks registers the system checks)

        observability.connect()  # the request's context into the tasks it queues
        observability.connect_models()  # pauses and control results counted as they are saved
