"""System checks of our own (``manage.py check``; the image's ``check`` role runs them with ``--deploy``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register

# Keys written in this repository, hence known to anyone: the embedded default's (settings/local.py), the
# one the image build loads the settings with (Dockerfile) and the test suite's (settings/test.py). Django's
# own check (security.W009) only judges length and variety, which the first two pass.
PUBLIC_SECRET_KEYS = frozenset(
    {
        "embedded-default-not-secret-change-me-in-production",
        "build-only-never-used-at-run-time",
        "test-only-secret",
    }
)


@register(Tags.security, deploy=True)
def secret_key_is_not_public(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if settings.SECRET_KEY in PUBLIC_SECRET_KEYS:
        return [
            Error(
                "SECRET_KEY is a key published in the repository.",
                hint="Set DJANGO_SECRET_KEY to a long random value, e.g. "
                "python -c 'import secrets; print(secrets.token_urlsafe(50))'.",
                id="screenqa.E001",
            )
        ]
    return []
