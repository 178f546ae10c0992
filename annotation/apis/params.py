"""Query parameters, strictly: the one way an API view reads ``?name=value``.

A view declares its query parameters once, as a ``QueryParams`` serializer: the fields validate
them (``query_params``) and the same class documents them in the schema
(``extend_schema(parameters=[TheParams])``: type, enum, minimum and maximum, default). A junk
integer, a value out of range, an unknown choice or a blank value is a 400 whose ``field`` names
the parameter (the one exception handler, ``annotation.apis.errors``); nothing falls back
silently to a default. Parameters a view does not declare are ignored (``?format=json``).

``PageParams`` and ``Pagination`` are the one pagination of the API: ``page`` (from 1) and
``page_size`` (1 to ``MAX_PAGE_SIZE``), refused the same way, including a page past the last.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.paginator import InvalidPage
from django.db.models import QuerySet
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request

from annotation.exceptions import ApplicationError

PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
# Ids are BigAutoField: a larger integer would reach PostgreSQL and fail there.
MAX_ID = 2**63 - 1


class QueryParams(serializers.Serializer):
    """Base of a view's query parameters (read with ``query_params``)."""


def id_param(**kwargs: Any) -> serializers.IntegerField:
    """A query parameter naming an object by id (a positive integer a database id can be)."""
    return serializers.IntegerField(min_value=1, max_value=MAX_ID, **kwargs)


class ChoiceParam(serializers.ChoiceField):
    """A ``ChoiceField`` whose refusal names the parameter and its choices."""

    def to_internal_value(self, data: Any) -> Any:
        if str(data) not in self.choice_strings_to_values:
            raise serializers.ValidationError(
                f"Unknown {self.field_name} {str(data)!r}: use one of {', '.join(map(str, self.choices))}."
            )
        return self.choice_strings_to_values[str(data)]


def choice_param(choices: Sequence[str], **kwargs: Any) -> ChoiceParam:
    """A query parameter that is one of ``choices`` (blank is refused like any other unknown value)."""
    return ChoiceParam(choices=list(choices), **kwargs)


def query_params(params: type[QueryParams], request: Request) -> dict[str, Any]:
    """``request``'s query parameters as ``params`` declares them: their validated values (absent
    optional ones are missing, or their default); anything invalid is a 400 naming the parameter."""
    # A plain dict, not the QueryDict: DRF reads a QueryDict as an HTML form, where a blank optional
    # field counts as absent (``?stage=`` would silently mean "every stage").
    found = params(data=request.query_params.dict())
    found.is_valid(raise_exception=True)
    return dict(found.validated_data)


class PageParams(QueryParams):
    """The pagination parameters; a paginated view's params inherit them (so the schema lists them)."""

    page = serializers.IntegerField(min_value=1, max_value=MAX_ID, required=False, help_text="from 1")
    page_size = serializers.IntegerField(
        min_value=1, max_value=MAX_PAGE_SIZE, required=False, help_text=f"rows per page (default {PAGE_SIZE})"
    )


class Pagination(PageNumberPagination):
    """DRF's page-number pagination, strict: ``page`` and ``page_size`` are read through
    ``PageParams`` (400 on junk or out of range instead of DRF's silent default or clamping), and
    a page past the last is a 400 on ``page`` (DRF's is a 404 ``Invalid page.``)."""

    page_size = PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE

    def get_page_size(self, request: Request) -> int:
        return int(query_params(PageParams, request).get("page_size", self.page_size))

    def paginate_queryset(
        self, queryset: QuerySet[Any] | Sequence[Any], request: Request, view: Any = None
    ) -> list[Any]:
        found = query_params(PageParams, request)  # read once: page and page size
        page_size, number = int(found.get("page_size", self.page_size)), found.get("page", 1)
        paginator = self.django_paginator_class(queryset, page_size)
        try:
            self.page = paginator.page(number)
        except InvalidPage:
            raise ApplicationError(
                f"Page {number} is past the last page ({paginator.num_pages}).", field="page"
            ) from None
        self.request = request
        return list(self.page)
