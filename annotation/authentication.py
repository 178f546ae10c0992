"""API authentication: DRF's token scheme (``Authorization: Token <key>``), with the user
read by one statement compiled once (``annotation.db.compiled``).

DRF's own class builds and compiles ``Token.objects.select_related("user").get(key=...)``
on every request, which cost more than the query; every crowd request pays it. Same
answers as DRF's: an unknown key or an inactive user is refused with the same messages
(403, because session authentication is listed first and asks for no challenge).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from annotation.db import compiled
from annotation.throttling import TokenFailureThrottle

_USER = compiled.Load(get_user_model(), "user__", plain=True)


def _token_user_build(values: dict[str, Any]) -> QuerySet[Any]:
    return Token.objects.filter(key=values["key"]).values_list("created", *_USER.paths)


class TokenAuthentication(authentication.TokenAuthentication):
    """Wrong keys are counted per client (``annotation.throttling.TokenFailureThrottle``): past
    the limit every token request of that client is refused with 429 until the window passes,
    so keys cannot be guessed at speed."""

    def authenticate(self, request: Any) -> tuple[Any, Token] | None:
        self._request = request
        return super().authenticate(request)

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        guard = TokenFailureThrottle()
        request = getattr(self, "_request", None)
        if request is not None:
            wait = guard.blocked(request)
            if wait is not None:
                raise exceptions.Throttled(wait=wait, detail="Too many wrong tokens from this address.")
        row = compiled.fetch_one(key="token-user", build=_token_user_build, values={"key": key})
        if row is None:
            if request is not None:
                guard.failed(request)
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user: Any = _USER.instance(row[1:])
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, Token(key=key, user=user, created=row[0])
