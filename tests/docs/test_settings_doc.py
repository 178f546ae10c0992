"""docs/leads.md lists every project setting as declared (``annotation.models.projects.SETTINGS``):
its group, default and allowed values and its help, in the table between the markers."""

from __future__ import annotations

from pathlib import Path

from annotation.models.projects import SETTINGS

ROOT = Path(__file__).resolve().parents[2]
BEGIN = "<!-- settings: from annotation.models.projects.SETTINGS (tests/docs/test_settings_doc.py) -->"
END = "<!-- end of settings -->"


def settings_table() -> str:
    rows = ["| group | setting | default | allowed | what it is |", "| --- | --- | --- | --- | --- |"]
    for setting in SETTINGS:
        cells = [setting.group, f"`{setting.name}`", setting.default_text(), setting.allowed_text(), setting.help]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def test_leads_md_lists_every_setting_as_declared():
    text = (ROOT / "docs" / "leads.md").read_text()
    assert BEGIN in text and END in text, "docs/leads.md lost its settings markers"
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == settings_table(), f"replace the table in docs/leads.md with:\n\n{settings_table()}\n"
