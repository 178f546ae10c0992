"""``demo_setup``: the demo project, its screens and users; safe to re-run."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.models import Candidate, Membership, Project, Screen


def _run(**kwargs) -> str:
    out = io.StringIO()
    call_command("demo_setup", stdout=out, stderr=io.StringIO(), **kwargs)
    return out.getvalue()


def _logins(output: str) -> dict[str, str]:
    return dict(re.findall(r"^  (annotator2?|lead|admin)\s+(\S+)\s", output, flags=re.M))


@pytest.mark.django_db(transaction=True)
def test_demo_setup_twice_one_project_same_screens_four_users(settings, tmp_path):
    # given an empty data folder
    settings.DATA_DIR = tmp_path / "data"
    # when demo_setup runs twice
    first = _run(screens=10)
    ids = set(Screen.objects.values_list("rico_id", flat=True))
    second = _run(screens=10)
    # then there is one project with the ten generated screens, imported once, with candidates
    assert Project.objects.filter(slug="demo").count() == 1
    assert Screen.objects.count() == 10
    assert set(Screen.objects.values_list("rico_id", flat=True)) == ids == {str(900000 + i) for i in range(10)}
    assert Candidate.objects.filter(screen__rico_id="900000").count() > 20
    assert len(list((tmp_path / "data" / "demo" / "screens").glob("*.json"))) == 10
    assert "10 screens imported" in first and "10 already present" in second
    # and four users whose printed (new) passwords work, with the right roles
    User = get_user_model()
    assert User.objects.count() == 4
    logins1, logins2 = _logins(first), _logins(second)
    assert set(logins2) == {"annotator", "annotator2", "lead", "admin"}
    for username, password in logins2.items():
        user = User.objects.get(username=username)
        assert user.check_password(password)
        assert not user.check_password(logins1[username])
    roles = dict(Membership.objects.values_list("user__username", "role"))
    assert roles == {"annotator": "annotator", "annotator2": "annotator", "lead": "lead"}
    assert Membership.objects.filter(in_answer_pool=True).count() == 2
    assert User.objects.get(username="admin").is_superuser
    assert not User.objects.get(username="lead").is_superuser
    assert "http://127.0.0.1:8000/" in second


@pytest.mark.django_db
def test_demo_setup_refuses_a_bad_count(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    with pytest.raises(CommandError, match="at least 1"):
        _run(screens=0)
    assert not Project.objects.exists()


def test_generate_screens_command_folder_and_zip(tmp_path):
    # when the command writes a folder and a zip
    out = io.StringIO()
    call_command("generate_screens", str(tmp_path / "dir"), count=3, seed=2, verbosity=0, stdout=out)
    call_command("generate_screens", str(tmp_path / "s.zip"), count=3, seed=2, zip=True, verbosity=0, stdout=out)
    # then both hold the same three pairs
    names = sorted(p.name for p in (tmp_path / "dir").iterdir())
    assert names == sorted(f"{900000 + i}.{e}" for i in range(3) for e in ("jpg", "json"))
    with zipfile.ZipFile(tmp_path / "s.zip") as zf:
        assert sorted(zf.namelist()) == names
    assert "Wrote 3 screens" in out.getvalue()


def test_generate_screens_command_rejects_bad_input(tmp_path):
    with pytest.raises(CommandError, match="--count"):
        call_command("generate_screens", str(tmp_path / "x"), count=0, verbosity=0)
    with pytest.raises(CommandError, match="WIDTHxHEIGHT"):
        call_command("generate_screens", str(tmp_path / "x"), "--count", "1", "--sizes", "big", verbosity=0)
    assert not (tmp_path / "x").exists()
