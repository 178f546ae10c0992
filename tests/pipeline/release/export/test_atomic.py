"""A failed or killed export never leaves a partial file where a complete one is expected."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap

import pytest
from django.conf import settings

from pipeline.release.export.atomic import atomic_writer, file_sha256


def test_success_replaces_the_file_and_reports_its_hash(tmp_path):
    target = tmp_path / "sub" / "train.json"
    with atomic_writer(target) as out:
        out.write("[1, ")
        out.write("2]")
    assert target.read_bytes() == b"[1, 2]"
    assert out.sha256.hexdigest() == hashlib.sha256(b"[1, 2]").hexdigest() == file_sha256(target)
    assert out.size == 6
    assert [p.name for p in target.parent.iterdir()] == ["train.json"]


def test_an_error_half_way_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    # Given a complete file from an earlier export
    target = tmp_path / "train.json"
    target.write_bytes(b"[complete]")
    # When a new export fails after writing more than a buffer's worth
    with pytest.raises(RuntimeError), atomic_writer(target) as out:
        out.write("x" * (3 << 20))
        raise RuntimeError("database went away")
    # Then the earlier file is untouched and nothing else is in the folder
    assert target.read_bytes() == b"[complete]"
    assert [p.name for p in tmp_path.iterdir()] == ["train.json"]


def test_a_killed_writer_leaves_no_file_at_the_expected_path(tmp_path):
    # Given a process that dies (no cleanup at all) in the middle of writing
    target = tmp_path / "validation.json"
    script = textwrap.dedent(
        f"""
        import os
        from pipeline.release.export.atomic import atomic_writer
        with atomic_writer({str(target)!r}) as out:
            out.write("[" + "1, " * 1_000_000)
            out.flush()
            os._exit(9)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=str(settings.BASE_DIR))
    assert result.returncode == 9
    # Then the expected path does not exist; only a hidden temporary file remains
    assert not target.exists()
    leftovers = list(tmp_path.iterdir())
    assert len(leftovers) == 1 and leftovers[0].name.startswith(".validation.json.")
