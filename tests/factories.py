"""Factories for the domain models (factory_boy)."""

from __future__ import annotations

import io

import factory
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from PIL import Image

from annotation import models

PASSWORD = "pass-word-123"


def png_bytes(width: int = 108, height: int = 192, color: str = "white") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, "PNG")
    return buf.getvalue()


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Project

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.replace("-", " ").title())


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = models.Role.ANNOTATOR


class AppFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.App

    project = factory.SubFactory(ProjectFactory)
    package = factory.Sequence(lambda n: f"com.example.app{n}")


class ScreenFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Screen

    project = factory.SubFactory(ProjectFactory)
    app = factory.SubFactory(AppFactory, project=factory.SelfAttribute("..project"))
    rico_id = factory.Sequence(lambda n: str(10000 + n))
    width = 1080
    height = 1920
    image = factory.LazyAttribute(
        lambda o: ContentFile(png_bytes(o.width // 10, o.height // 10), name=f"{o.rico_id}.png")
    )
    vh = factory.LazyFunction(lambda: {"activity_name": "com.example/.Main", "activity": {"root": {}}})
    content_sha256 = factory.Sequence(lambda n: f"{n:064d}")


class CandidateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Candidate

    screen = factory.SubFactory(ScreenFactory)
    vh_index = factory.Sequence(lambda n: n + 1)
    left = 10
    top = 10
    right = 200
    bottom = 60
    class_name = "android.widget.TextView"
    type = models.ElementType.TEXT
    text = factory.Sequence(lambda n: f"Item {n}")
