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

_USER = compiled.Load(get_user_model(), "user__", plain=True)


def _token_user_build(values: dict[str, Any]) -> QuerySet[Any]:
    return Token.objects.filter(key=values["key"]).values_list("created", *_USER.paths)


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        row = compiled.fetch_one(key="token-user", build=_token_user_build, values={"key": key})
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user: Any = _USER.instance(row[1:])
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, Token(key=key, user=user, created=row[0])
