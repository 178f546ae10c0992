"""Import every real RICO screen and trace screen of ../shared/data (skipped when absent).

The expected numbers below were checked by hand: open the JSON, walk ``activity.root`` in
pre-order (root = 0), scale by image_width / 1440, floor left/top and ceil right/bottom.
"""

from __future__ import annotations

import pytest

from annotation.models import Candidate, Screen
from pipeline.ingest import import_screens

pytestmark = [pytest.mark.django_db, pytest.mark.realdata]


def bounds(rico_id: str, vh_index: int) -> tuple:
    c = Candidate.objects.get(screen__rico_id=rico_id, vh_index=vh_index)
    return (c.left, c.top, c.right, c.bottom, c.type, c.text or c.content_desc)


def test_all_real_screens_import_with_hand_checked_candidates(project, shared_data):
    # when the 63 unique-UI screens are imported
    summary = import_screens(project=project, source=shared_data / "rico" / "screens")
    # then all of them are in, nothing rejected
    assert (len(summary.imported), summary.already_present, summary.rejected) == (63, [], [])
    assert Candidate.objects.filter(screen__project=project).count() == 1264

    # 3360: a 540x960 screenshot (x0.375) of escapemusic.android.a046bobmarley, 306 nodes, 38 visible leaves
    screen = Screen.objects.select_related("app").get(rico_id="3360")
    assert (screen.width, screen.height, screen.app.package) == (540, 960, "escapemusic.android.a046bobmarley")
    assert screen.candidates.count() == 38
    # node 17 "Bob Marley" [163, 98, 568, 195] -> 61.125, 36.75, 213, 73.125
    assert bounds("3360", 17) == (61, 36, 213, 74, "text", "Bob Marley")
    # node 132 FloatingActionButton [1188, 2136, 1384, 2332] -> 445.5, 801, 519, 874.5
    assert bounds("3360", 132) == (445, 801, 519, 875, "button", "")
    # node 305 status bar [0, 0, 1440, 84] -> 31.5 ceils to 32
    assert bounds("3360", 305) == (0, 0, 540, 32, "other", "")
    # node 110: an icon labelled only by content-desc ["Image"]
    assert bounds("3360", 110) == (18, 805, 78, 866, "image", "Image")
    # node 66: a visible container whose children are all invisible is itself a leaf;
    # node 2 (an invisible ViewStub) counts in the index but is no candidate
    assert screen.candidates.filter(vh_index=66).exists()
    assert not screen.candidates.filter(vh_index__in=[0, 2, 13, 53]).exists()

    # 33641: 1080x1920 (x0.75); node 11 is a CheckBox "Notification Sound" [35, 344, 543, 456]
    assert bounds("33641", 11) == (26, 258, 408, 342, "checkbox", "Notification Sound")
    # 33682: node 31 is a Switch (CompoundButton -> Button -> TextView): checkbox, not button
    assert bounds("33682", 31)[4] == "checkbox"

    # a visible container whose children are all hidden takes the text of those that lie on it,
    # in order; children whose boxes are inverted below the screen's edge lend nothing
    assert Candidate.objects.get(screen__rico_id="33619", vh_index=73).text.startswith("car Follow Best Match Sort")
    assert Candidate.objects.get(screen__rico_id="3360", vh_index=151).text.startswith("Bob Marley Natural Mystic 0 ")
    assert Candidate.objects.get(screen__rico_id="33618", vh_index=63).text == ""


def test_all_real_trace_screens_import(project, shared_data):
    summary = import_screens(project=project, source=shared_data / "rico" / "traces")
    assert (len(summary.imported), summary.rejected) == (165, [])
    assert Candidate.objects.filter(screen__project=project).count() == 1940
    assert Screen.objects.filter(project=project).values("app").distinct().count() == 68
    # air.air.com.EasyRandomVideoChat/trace_0/548: 6 nodes, one visible leaf, the ProgressBar (node 5)
    rico_id = "air.air.com.EasyRandomVideoChat:trace_0:548"
    screen = Screen.objects.select_related("app").get(rico_id=rico_id)
    assert screen.app.package == "air.air.com.EasyRandomVideoChat"
    assert (screen.width, screen.height) == (1080, 1920)
    assert list(screen.candidates.values_list("vh_index", flat=True)) == [5]
    # [636, 1154, 804, 1322] x0.75 -> 477, 865.5, 603, 991.5
    assert bounds(rico_id, 5) == (477, 865, 603, 992, "other", "")
    # a second run over both folders changes nothing
    again = import_screens(project=project, source=shared_data / "rico" / "traces")
    assert (again.imported, len(again.already_present), again.rejected) == ([], 165, [])
