"""System checks of our own (``manage.py check``; the image's ``check`` role runs them with ``--deploy``).

Django's own (``security.W009``) judges a secret's length and variety only: a placeholder repeated to 50
characters passes it, and nothing of Django's refuses ``ALLOWED_HOSTS = ['*']`` (issue 19 §10).
"""

from __future__ import annotations

import re
from collections import Counter
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


# What people write where a secret should go, lowercased with everything but letters and digits dropped.
# Seven letters or more, so that a random key (token_urlsafe) holds one by chance about once in 10^10.
PLACEHOLDER_WORDS = (
    "changeme",
    "changeit",
    "changethis",
    "replaceme",
    "placeholder",
    "yoursecret",
    "secretkey",
    "notsecret",
    "insecure",
    "example",
    "randomvalue",  # compose.yaml's hint: "set DJANGO_SECRET_KEY in .env (a long random value)"
)


def secret_placeholder_reason(key: str) -> str | None:
    """Why ``key`` looks like a placeholder rather than a random secret, or ``None``."""
    if not key:
        return "it is empty"
    for size in range(1, len(key) // 2 + 1):
        if (key[:size] * (len(key) // size + 1))[: len(key)] == key:
            return "it is one character repeated" if size == 1 else f"it is a part of {size} characters repeated"
    _char, count = Counter(key).most_common(1)[0]
    if count * 4 > len(key):
        return "one character makes up more than a quarter of it"
    letters = re.sub(r"[^a-z0-9]", "", key.lower())
    for word in PLACEHOLDER_WORDS:
        if word in letters:
            return f"it contains the placeholder word '{word}'"
    return None


@register(Tags.security, deploy=True)
def secret_key_is_not_a_placeholder(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    reason = secret_placeholder_reason(str(settings.SECRET_KEY))
    if reason is None or settings.SECRET_KEY in PUBLIC_SECRET_KEYS:  # E001 says that one
        return []
    return [
        Error(
            f"SECRET_KEY looks like a placeholder: {reason}.",
            hint="Set DJANGO_SECRET_KEY to a long random value, e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe(50))'.",
            id="screenqa.E003",
        )
    ]


@register(Tags.security, deploy=True)
def allowed_hosts_are_named(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if "*" not in settings.ALLOWED_HOSTS:
        return []
    return [
        Error(
            "ALLOWED_HOSTS lets any host name in ('*'): the links the site builds from the Host header "
            "(invitation links) could point anywhere.",
            hint="Set DJANGO_ALLOWED_HOSTS to the site's host names, e.g. qa.example.org.",
            id="screenqa.E002",
        )
    ]
