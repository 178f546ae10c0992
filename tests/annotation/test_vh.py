"""The VH conventions: vh_index traversal, pixel rounding, element types, candidates, safe parsing."""

from __future__ import annotations

import json

import pytest

from annotation.vh import (
    VHError,
    app_package,
    bounds_to_pixels,
    element_type,
    iter_nodes,
    node_content_desc,
    parse_vh,
    vh_candidates,
    vh_nodes,
    vh_text,
)


def n(name: str, bounds=(0, 0, 1440, 2560), visible=True, children=None, **extra):
    node = {"class": name, "bounds": list(bounds), "visible-to-user": visible, **extra}
    if children is not None:
        node["children"] = children
    return node


def test_iter_nodes_is_preorder_over_every_node_root_zero():
    # given a tree with an invisible node in the middle
    root = n("root", children=[n("a", children=[n("a1"), n("a2", visible=False)]), n("b")])
    # when it is walked
    walked = [(index, parent, node["class"]) for index, parent, node in iter_nodes(root)]
    # then indexes follow pre-order depth-first, invisible nodes count, root = 0
    assert walked == [(0, -1, "root"), (1, 0, "a"), (2, 1, "a1"), (3, 1, "a2"), (4, 0, "b")]


def test_iter_nodes_survives_a_very_deep_tree():
    root = leaf = n("root")
    for depth in range(20_000):
        child = n(f"n{depth}")
        leaf["children"] = [child]
        leaf = child
    assert sum(1 for _ in iter_nodes(root)) == 20_001


def test_iter_nodes_refuses_a_null_child():
    with pytest.raises(VHError, match="node 1 is not an object"):
        list(iter_nodes(n("root", children=[None])))


@pytest.mark.parametrize(
    ("bounds", "size", "expected"),
    [
        # x0.75: 163 -> 122.25 floors, 195 -> 146.25 ceils
        ((163, 98, 568, 195), (1080, 1920), (122, 73, 426, 147)),
        # x0.375 (540 wide): 1078 -> 404.25 floor; 1117 -> 418.875 ceil
        ((1078, 1078, 1117, 1117), (540, 960), (404, 404, 419, 419)),
        # clipped to the image
        ((-20, -5, 1500, 2600), (1080, 1920), (0, 0, 1080, 1920)),
        # float bounds
        ((10.5, 20.2, 30.1, 40.9), (1440, 2560), (10, 20, 31, 41)),
    ],
)
def test_bounds_to_pixels_floors_left_top_ceils_right_bottom_and_clips(bounds, size, expected):
    width, height = size
    assert bounds_to_pixels(bounds, image_width=width, image_height=height, device_width=1440) == expected


@pytest.mark.parametrize(
    "bounds",
    [(1440, 467, 1440, 2388), (2076, 537, 1440, 705), (1500, 0, 2000, 100), (0, 2600, 100, 2700), (5, 5, 5, 5)],
)
def test_bounds_without_area_after_clipping_give_none(bounds):
    assert bounds_to_pixels(bounds, image_width=1080, image_height=1920, device_width=1440) is None


@pytest.mark.parametrize(
    ("cls", "ancestors", "expected"),
    [
        ("android.widget.CheckBox", ["android.widget.CompoundButton", "android.widget.Button"], "checkbox"),
        ("a.b.c", ["android.widget.Switch", "android.widget.CompoundButton", "android.widget.Button"], "checkbox"),
        ("android.widget.ToggleButton", ["android.widget.CompoundButton", "android.widget.TextView"], "checkbox"),
        ("android.widget.CheckedTextView", ["android.widget.TextView", "android.view.View"], "checkbox"),
        ("android.widget.Button", ["android.widget.TextView", "android.view.View"], "button"),
        ("x.y", ["android.widget.ImageButton", "android.widget.ImageView"], "button"),
        ("android.support.v7.widget.al", ["android.widget.ImageView", "android.view.View"], "image"),
        ("x.TypefaceTextView", ["android.widget.TextView", "android.view.View"], "text"),
        ("android.widget.EditText", ["android.widget.TextView"], "text"),
        (
            "com.mopub.mobileads.HtmlBannerWebView",
            ["android.webkit.WebView", "android.widget.AbsoluteLayout"],
            "webview",
        ),
        ("android.widget.LinearLayout", ["android.view.ViewGroup", "android.view.View"], "other"),
        ("android.widget.ViewSwitcher", ["android.widget.FrameLayout"], "other"),
    ],
)
def test_element_type_checks_the_chain_checkbox_before_button_before_text(cls, ancestors, expected):
    assert element_type({"class": cls, "ancestors": ancestors}) == expected


@pytest.mark.parametrize("ancestors", [5, "android.widget.TextView", None, {"a": 1}])
def test_element_type_ignores_malformed_ancestors(ancestors):
    assert element_type({"class": "android.widget.Button", "ancestors": ancestors}) == "button"
    assert element_type({"class": 7, "ancestors": ancestors}) == "other"


def test_candidates_are_visible_leaves_in_pixels():
    # given: a container with a visible text, an invisible button, an off-screen pager page,
    # and a visible panel whose only children are invisible
    vh = {
        "activity_name": "com.example/.Main",
        "activity": {
            "root": n(
                "android.widget.FrameLayout",
                children=[
                    n(
                        "android.widget.TextView",
                        (0, 84, 720, 252),
                        text="Hello",
                        ancestors=["android.widget.TextView"],
                    ),
                    n("android.widget.Button", (0, 300, 720, 400), visible=False),
                    n("pager", (0, 500, 1440, 1500), children=[n("page2", (1440, 500, 2880, 1500))]),
                    n("panel", (0, 1600, 1440, 2000), children=[n("hidden", (0, 1600, 10, 1610), visible=False)]),
                    n("icon", (1300, 100, 1400, 200), **{"content-desc": ["Search"]}),
                ],
            )
        },
    }
    # when candidates are computed for a 1080x1920 screenshot
    candidates = vh_candidates(vh, image_width=1080, image_height=1920, device_width=1440)
    # then: leaves only; the pager is a leaf because its page is off-screen; indexes are pre-order
    assert [(c.vh_index, c.class_name) for c in candidates] == [
        (1, "android.widget.TextView"),
        (3, "pager"),
        (5, "panel"),
        (7, "icon"),
    ]
    text = candidates[0]
    assert (text.left, text.top, text.right, text.bottom) == (0, 63, 540, 189)
    assert (text.text, text.type) == ("Hello", "text")
    assert candidates[3].content_desc == "Search"


def test_candidate_with_missing_root_is_refused():
    with pytest.raises(VHError, match=r"activity\.root"):
        vh_candidates({"activity": {}}, image_width=1080, image_height=1920, device_width=1440)


@pytest.mark.parametrize(
    ("bounds", "reason"),
    [
        (["a", 0, 10, 10], "non-numeric"),
        ([True, 0, 10, 10], "non-numeric"),
        ([0, 0, 10], "not 4 numbers"),
        ([0, float("nan"), 10, 10], "non-finite"),
        ("0,0,10,10", "not 4 numbers"),
    ],
)
def test_malformed_bounds_anywhere_are_refused(bounds, reason):
    vh = {"activity": {"root": n("root", children=[n("bad", visible=False, bounds=bounds)])}}
    vh["activity"]["root"]["children"][0]["bounds"] = bounds
    with pytest.raises(VHError, match=reason):
        vh_candidates(vh, image_width=1080, image_height=1920, device_width=1440)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_parse_vh_refuses_nan_and_infinity(constant):
    raw = b'{"activity": {"root": {"bounds": [0, %s, 10, 10], "visible-to-user": true}}}' % constant.encode()
    with pytest.raises(VHError, match=f"VH JSON holds {constant}, which is not a finite number"):
        parse_vh(raw, max_depth=50)


def test_vh_text_is_utf8_without_nul_escapes():
    assert vh_text('\ufeff{"a": "é"}'.encode()) == '{"a": "é"}'
    with pytest.raises(VHError, match="not valid UTF-8"):
        vh_text(b'{"a": "\xff"}')
    with pytest.raises(VHError, match="u0000"):
        vh_text(b'{"a": "x\\u0000y"}')


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "not an object"),
        (b"\xff\xfe{}", "not valid"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (json.dumps({"a": [[[[[[[[[[1]]]]]]]]]]}).encode(), "nested too deeply"),
    ],
)
def test_parse_vh_refuses_bad_json_with_a_reason(raw, reason):
    with pytest.raises(VHError, match=reason):
        parse_vh(raw, max_depth=8)


def test_parse_vh_accepts_depth_up_to_the_cap():
    assert parse_vh(json.dumps({"a": [[1]]}).encode(), max_depth=3) == {"a": [[1]]}


def test_app_package_and_content_desc():
    assert app_package({"activity_name": "com.ebay.mobile/com.ebay.Main"}) == "com.ebay.mobile"
    assert app_package({}) == ""
    assert node_content_desc({"content-desc": [None]}) == ""
    assert node_content_desc({"content-desc": ["Navigate up"]}) == "Navigate up"


def test_random_type_damage_gives_candidates_or_vherror_never_a_crash():
    # given a small valid VH, damaged many times by putting odd values in random places
    import copy
    import random

    rng = random.Random(1)
    oddities = [None, 5, -3.5, 1e308, "x", [], {}, [None], [1, 2], True, {"children": 3}, ["a", "b", "c", "d"]]
    base = {
        "activity_name": "com.example/.Main",
        "activity": {
            "root": n(
                "android.widget.FrameLayout",
                children=[
                    n("android.widget.TextView", (0, 84, 720, 252), text="Hi", ancestors=["android.widget.TextView"]),
                    n("x", (0, 300, 720, 400), children=[n("y", (0, 300, 10, 310), **{"content-desc": ["d"]})]),
                ],
            )
        },
    }
    keys = ["class", "ancestors", "bounds", "visible-to-user", "text", "content-desc", "children", "resource-id"]
    for _ in range(500):
        vh = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            node = vh["activity"]["root"]
            while node.get("children") and isinstance(node["children"], list) and rng.random() < 0.6:
                child = rng.choice(node["children"])
                if not isinstance(child, dict):
                    break
                node = child
            node[rng.choice(keys)] = rng.choice(oddities)
        # when candidates are computed, then either they come out in range or VHError says why
        try:
            found = vh_candidates(vh, image_width=1080, image_height=1920, device_width=1440)
        except VHError:
            continue
        for c in found:
            assert 0 <= c.left < c.right <= 1080 and 0 <= c.top < c.bottom <= 1920
            assert isinstance(c.text, str) and isinstance(c.content_desc, str) and isinstance(c.class_name, str)


def _tree(*children):
    return {
        "activity_name": "com.example/.Main",
        "activity": {"root": n("android.widget.FrameLayout", children=list(children))},
    }


def test_a_leaf_whose_children_are_all_hidden_takes_their_text_in_order():
    # given: a visible price row whose text sits in hidden children (as RICO records it), a row
    # with its own text, and a pager whose visible next page lies off-screen
    vh = _tree(
        n(
            "android.widget.LinearLayout",
            (0, 0, 1440, 200),
            children=[
                n("android.widget.TextView", (0, 0, 700, 200), visible=False, text="$58.92"),
                n("android.widget.ImageView", (700, 0, 800, 200), visible=False),
                n(
                    "android.widget.LinearLayout",
                    (800, 0, 1440, 200),
                    visible=False,
                    children=[n("android.widget.TextView", (800, 0, 1440, 200), visible=False, text=" Local pickup ")],
                ),
                # inverted (below the screen's edge, as RICO records it) and off the row: not its text
                n("android.widget.TextView", (0, 2600, 700, 2560), visible=False, text="Below"),
                n("android.widget.TextView", (0, 300, 700, 400), visible=False, text="Elsewhere"),
            ],
        ),
        n("row", (0, 300, 1440, 400), text="Own", children=[n("t", (0, 300, 10, 310), visible=False, text="Hidden")]),
        n(
            "icon",
            (0, 500, 100, 600),
            **{"content-desc": ["Menu"]},
            children=[n("t", (0, 500, 9, 509), visible=False, text="x")],
        ),
        n("pager", (0, 700, 1440, 900), children=[n("page2", (1440, 700, 2880, 900), text="Off screen")]),
    )
    # when candidates are computed
    candidates = vh_candidates(vh, image_width=1080, image_height=1920, device_width=1440)
    # then the price row is a candidate with the texts of its hidden descendants that lie on it,
    # in pre-order; own text and content-desc win; off-screen (visible) pages lend nothing
    assert [(c.class_name, c.text, c.content_desc) for c in candidates] == [
        ("android.widget.LinearLayout", "$58.92 Local pickup", ""),
        ("row", "Own", ""),
        ("icon", "", "Menu"),
        ("pager", "", ""),
    ]


def test_vh_nodes_are_every_shown_node_and_their_leaves_are_the_candidates():
    # given a tree with containers, a hidden node and a leaf with hidden children
    vh = _tree(
        n(
            "list",
            (0, 0, 1440, 1000),
            children=[
                n("android.widget.TextView", (0, 0, 1440, 100), text="Title"),
                n("row", (0, 100, 1440, 200), children=[n("t", (0, 100, 720, 200), visible=False, text="Price")]),
                n("gone", (0, 200, 1440, 300), visible=False),
            ],
        ),
        n("offscreen", (0, 2600, 1440, 2700)),
    )
    nodes = vh_nodes(vh, image_width=1080, image_height=1920, device_width=1440)
    # then: the root, the list and its two shown children (pre-order), in pixels; hidden and
    # off-image nodes are left out; the parent of each is its vh_index
    assert [(x.vh_index, x.parent, x.class_name, x.text, x.leaf) for x in nodes] == [
        (0, -1, "android.widget.FrameLayout", "", False),
        (1, 0, "list", "", False),
        (2, 1, "android.widget.TextView", "Title", True),
        (3, 1, "row", "Price", True),
    ]
    assert (nodes[3].left, nodes[3].top, nodes[3].right, nodes[3].bottom) == (0, 75, 1080, 150)
    candidates = vh_candidates(vh, image_width=1080, image_height=1920, device_width=1440)
    assert [(c.vh_index, c.left, c.top, c.right, c.bottom, c.text) for c in candidates] == [
        (x.vh_index, x.left, x.top, x.right, x.bottom, x.text) for x in nodes if x.leaf
    ]


@pytest.mark.realdata
def test_real_rico_screens_hidden_child_text_is_prefilled(shared_data):
    """On the real RICO screens: the leaves of vh_nodes are the candidates; of the 6 candidates
    without text whose hidden descendants hold some, the 2 whose descendants lie on them are
    filled (a filter bar under a panel, 33619; a closed drawer, 3360), the 4 whose descendants'
    boxes are inverted below the screen's edge stay empty (33618's price row)."""
    from PIL import Image

    screens = sorted((shared_data / "rico" / "screens").glob("*.json"))
    assert screens
    total = prefilled = 0
    for path in screens:
        vh = json.loads(path.read_text())
        with Image.open(path.with_suffix(".jpg")) as image:
            width, height = image.size
        device_width = 1440 if width < height else 2560
        candidates = vh_candidates(vh, image_width=width, image_height=height, device_width=device_width)
        nodes = vh_nodes(vh, image_width=width, image_height=height, device_width=device_width)
        assert [c.vh_index for c in candidates] == [x.vh_index for x in nodes if x.leaf]
        all_nodes = list(iter_nodes(vh["activity"]["root"]))
        for c in candidates:
            total += 1
            own = isinstance(all_nodes[c.vh_index][2].get("text"), str) and all_nodes[c.vh_index][2]["text"]
            if c.text and not own:
                prefilled += 1
        by_index = {c.vh_index: c for c in candidates}
        if path.stem == "33618":
            assert by_index[63].text == ""
        if path.stem == "33619":
            assert by_index[73].text == "car Follow Best Match Sort View Refine Nearby Categories Transmission"
    assert (total, prefilled) == (1264, 2)
