"""``demo_setup``: the demo project, its screens and users; safe to re-run."""

from __future__ import annotations

import io
import re
import stat
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.models import Candidate, GoldItem, Membership, Project, Question, Screen, ScreenState
from devtools.demo.services import DEMO_GOLD_SCREENS, DEMO_GOLD_START_ID, DEMO_QUALITY
from pipeline.decisions.decide import PREDECIDED_QUESTION_REASONS


def _run(**kwargs) -> str:
    out = io.StringIO()
    call_command("demo_setup", stdout=out, stderr=io.StringIO(), **kwargs)
    return out.getvalue()


def _logins(output: str) -> dict[str, str]:
    return dict(re.findall(r"^  (annotator[2-4]?|lead|admin)\s+(\S+)\s", output, flags=re.M))


@pytest.mark.django_db(transaction=True)
def test_demo_setup_twice_one_project_same_screens_same_users_and_passwords(settings, tmp_path):
    # given an empty data folder
    settings.DATA_DIR = tmp_path / "data"
    # when demo_setup runs twice
    first = _run(screens=10)
    ids = set(Screen.objects.values_list("rico_id", flat=True))
    second = _run(screens=10)
    # then there is one project with the ten generated screens, imported once, with candidates
    assert Project.objects.filter(slug="demo").count() == 1
    work = Screen.objects.exclude(state=ScreenState.NO_QUESTIONS)
    assert work.count() == 10
    assert set(work.values_list("rico_id", flat=True)) == {str(900000 + i) for i in range(10)}
    assert Screen.objects.count() == 10 + DEMO_GOLD_SCREENS
    assert set(Screen.objects.values_list("rico_id", flat=True)) == ids
    assert Candidate.objects.filter(screen__rico_id="900000").count() > 20
    assert len(list((tmp_path / "data" / "demo" / "screens").glob("*.json"))) == 10
    assert "10 screens imported" in first and "10 already present" in second
    # and six users whose printed passwords work and stay the same across runs, with the right roles
    User = get_user_model()
    assert User.objects.count() == 6
    logins1, logins2 = _logins(first), _logins(second)
    assert set(logins2) == {"annotator", "annotator2", "annotator3", "annotator4", "lead", "admin"}
    assert logins1 == logins2
    for username, password in logins2.items():
        assert User.objects.get(username=username).check_password(password)
    roles = dict(Membership.objects.values_list("user__username", "role"))
    assert roles == {f"annotator{n}": "annotator" for n in ("", "2", "3", "4")} | {"lead": "lead"}
    assert set(Membership.objects.filter(in_answer_pool=True).values_list("user__username", flat=True)) == {
        "annotator", "annotator2", "annotator3", "annotator4"
    }  # fmt: skip
    assert User.objects.get(username="admin").is_superuser
    assert not User.objects.get(username="lead").is_superuser
    assert "http://127.0.0.1:8000/" in second
    # and the passwords file holds the same logins, readable by its owner only
    path = tmp_path / "data" / "demo-passwords.txt"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    written = dict(re.findall(r"^(\S+)\s+(\S+)\s", path.read_text(), flags=re.M))
    assert {k: v for k, v in written.items() if k != "#"} == logins2
    assert str(path) in second
    # and the demo project's quality control lets a newcomer finish
    project = Project.objects.get(slug="demo")
    assert {name: getattr(project, name) for name in DEMO_QUALITY} == DEMO_QUALITY
    # and a gold set, made once: every gold screen is pre-filtering gold and answers gold, on screens
    # that are never real work, with questions that never reach post-processing
    gold_ids = {str(DEMO_GOLD_START_ID + i) for i in range(DEMO_GOLD_SCREENS)}
    assert set(Screen.objects.filter(state=ScreenState.NO_QUESTIONS).values_list("rico_id", flat=True)) == gold_ids
    for stage in ("prefilter", "answers"):
        items = GoldItem.objects.filter(project=project, stage=stage, active=True)
        assert {g.screen.rico_id for g in items} == gold_ids
        assert items.count() > DEMO_QUALITY["qualification_items"]  # control items remain after qualifying
    assert "6 pre-filtering, 6 answers" in first and "6 pre-filtering, 6 answers" in second
    for question in Question.objects.all():
        assert question.state == "dropped" and question.drop_reason in PREDECIDED_QUESTION_REASONS


@pytest.mark.django_db(transaction=True)
def test_demo_setup_gives_a_new_password_to_a_user_missing_from_the_file(settings, tmp_path):
    # given a demo whose passwords file lost the lead's line and whose mode was opened up
    settings.DATA_DIR = tmp_path
    first = _logins(_run(screens=1))
    path = tmp_path / "demo-passwords.txt"
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines() if not line.startswith("lead")))
    path.chmod(0o644)
    # when demo_setup runs again
    second = _logins(_run(screens=1))
    # then only the lead has a new password, and the file is private again
    assert {k for k in first if first[k] != second[k]} == {"lead"}
    assert get_user_model().objects.get(username="lead").check_password(second["lead"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.django_db(transaction=True)
def test_demo_setup_prints_the_url_it_is_given_and_migrates(settings, tmp_path):
    # given the URL `make demo` passes for DEMO_BIND=0.0.0.0:8123
    settings.DATA_DIR = tmp_path
    output = _run(screens=1, url="http://0.0.0.0:8123", migrate=True)
    # then that URL is printed and written to the passwords file, not port 8000's
    assert "Open http://0.0.0.0:8123/ and log in" in output
    assert "8000" not in output
    assert "http://0.0.0.0:8123/" in (tmp_path / "demo-passwords.txt").read_text()


@pytest.mark.django_db
def test_demo_setup_refuses_a_bad_url(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    with pytest.raises(CommandError, match="http"):
        _run(screens=1, url="0.0.0.0:8000")
    assert not Project.objects.exists()


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
