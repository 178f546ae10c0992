"""RICO-format demo screens: Pillow-drawn phone screens with matching view hierarchies.

Every screen is laid out once in the RICO device space (1440x2560) and drawn at the
screenshot size with ``pixel = vh * image_width / 1440``, so every drawn box sits exactly
where its VH node says. The VH JSON copies the key set (and key order) of real RICO files
and carries their traps: ``visibility: gone`` and ``visible-to-user: false`` nodes, zero-area
stubs, inverted and off-screen bounds (pager pages at x = 1440, 2880), obfuscated classes
with a real ``ancestors`` chain, duplicate texts, a paragraph in one node, icons labelled only
in ``content-desc``, checkboxes whose state is in the pixels only, a ``WebView`` without
children over drawn web content, and dialogs whose VH root is only the dialog window.

Contract: the output depends only on ``(seed, index)`` (and the Pillow version):
``generate_screens`` run twice with the same arguments writes the same bytes.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

DEVICE_W, DEVICE_H = 1440, 2560
STATUS_H = 84  # status bar, device px
NAV_TOP = 2392  # navigation bar starts here
APPBAR_H = 196
KINDS: tuple[str, ...] = ("list", "settings", "login", "dialog", "webview")
SIZES: tuple[tuple[int, int], ...] = ((1080, 1920), (540, 960))
JPEG_QUALITY = 85

FONT_PATH = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
FONT_BOLD_PATH = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

# Superclass chains as RICO records them (the class itself is not in the chain).
_OBJ = ["java.lang.Object"]
_VIEW = ["android.view.View", *_OBJ]
_GROUP = ["android.view.ViewGroup", *_VIEW]
_TEXT = ["android.widget.TextView", *_VIEW]
ANCESTORS: dict[str, list[str]] = {
    "com.android.internal.policy.PhoneWindow$DecorView": ["android.widget.FrameLayout", *_GROUP],
    "android.widget.FrameLayout": _GROUP,
    "android.widget.LinearLayout": _GROUP,
    "android.widget.RelativeLayout": _GROUP,
    "android.support.v7.widget.Toolbar": _GROUP,
    "android.support.v7.widget.RecyclerView": _GROUP,
    "android.support.v4.view.ViewPager": _GROUP,
    "android.support.v7.widget.CardView": ["android.widget.FrameLayout", *_GROUP],
    "android.widget.ListView": ["android.widget.AbsListView", "android.widget.AdapterView", *_GROUP],
    "android.widget.ScrollView": ["android.widget.FrameLayout", *_GROUP],
    "android.widget.TextView": _VIEW,
    "android.widget.ImageView": _VIEW,
    "android.widget.ImageButton": ["android.widget.ImageView", *_VIEW],
    "android.widget.Button": _TEXT,
    "android.widget.EditText": _TEXT,
    "android.widget.CheckBox": ["android.widget.CompoundButton", "android.widget.Button", *_TEXT],
    "android.view.ViewStub": _VIEW,
    "android.view.View": _OBJ,
    # obfuscated runtime classes (ProGuard): only the chain says what they are
    "android.support.v7.widget.al": ["android.widget.ImageView", *_VIEW],
    "android.support.v7.widget.ay": ["android.widget.TextView", *_VIEW],
}
WEBVIEW_ANCESTORS = ["android.webkit.WebView", "android.widget.AbsoluteLayout", *_GROUP]

FIRST = ["Alice", "Bruno", "Chen", "Dana", "Elif", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Liam"]
LAST = ["Martin", "Okafor", "Silva", "Novak", "Tanaka", "Berg", "Costa", "Dubois", "Meyer", "Rossi"]
MESSAGES = [
    "See you at 7 at the station",
    "Can you send me the invoice?",
    "The package arrived today",
    "Happy birthday!",
    "Meeting moved to Thursday",
    "Thanks for the photos",
    "Running 10 minutes late",
    "Dinner on Friday?",
]
TIMES = ["09:14", "Yesterday", "Yesterday", "Mon", "Sun", "12 Mar", "08:02", "Yesterday"]
SETTINGS = [
    ("Notifications", "Show alerts for new messages"),
    ("Sound", "Play a sound for notifications"),
    ("Vibrate", "Vibrate on incoming calls"),
    ("Auto-sync", "Sync data in the background"),
    ("Wi-Fi only", "Download media on Wi-Fi only"),
    ("Dark theme", "Use dark colours at night"),
    ("Location", "Allow access to your location"),
    ("Backup", "Back up chats to the cloud"),
]
PARAGRAPH = (
    "By signing in you agree to our Terms of Service and Privacy Policy. We use your email "
    "address to send you receipts and important account notices. You can change your "
    "preferences at any time in the settings."
)
WEB_TITLES = ["City marathon draws record crowd", "Five easy dinners for busy weeknights", "How to repot a cactus"]
WEB_TEXT = (
    "More than twenty thousand runners crossed the finish line on Sunday morning, the organisers "
    "said. Roads in the centre reopen at 4 pm. Results and photos are on the event page."
)

COLORS = {
    "status": (25, 118, 210),
    "appbar": (33, 150, 243),
    "bg": (250, 250, 250),
    "text": (33, 33, 33),
    "muted": (117, 117, 117),
    "line": (224, 224, 224),
    "accent": (0, 137, 123),
    "white": (255, 255, 255),
    "nav": (0, 0, 0),
}


@lru_cache(maxsize=256)
def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """A cached TrueType font; Pillow's built-in scalable font when DejaVu is absent."""
    try:
        return ImageFont.truetype(FONT_BOLD_PATH if bold else FONT_PATH, max(size, 1))
    except OSError:
        return ImageFont.load_default(size=max(size, 1))


@lru_cache(maxsize=4096)
def _text_width(text: str, size: int, bold: bool) -> float:
    return float(_font(size, bold).getlength(text))


def _line_height(size: int) -> int:
    return int(size * 1.25)


@dataclass(frozen=True)
class GeneratedScreen:
    """One screen in memory: ``image`` is JPEG bytes, ``vh`` the RICO JSON object."""

    rico_id: str
    kind: str
    width: int
    height: int
    image: bytes
    vh: dict[str, Any]

    def vh_bytes(self) -> bytes:
        # RICO's own layout: two-space indent, ", " separators.
        return json.dumps(self.vh, indent=2, separators=(", ", ": "), ensure_ascii=False).encode()


class _Screen:
    """Lays out nodes in device space and draws them at the screenshot scale."""

    def __init__(self, *, rng: random.Random, width: int, height: int, package: str) -> None:
        self.rng = rng
        self.width, self.height = width, height
        self.scale = width / DEVICE_W
        self.package = package
        self.image = Image.new("RGB", (width, height), COLORS["bg"])
        self.draw = ImageDraw.Draw(self.image)

    # --- coordinates -------------------------------------------------------------------------
    def px(self, v: float) -> int:
        return round(v * self.scale)

    def rect(self, b: Sequence[float], fill: Any = None, outline: Any = None, width: int = 1) -> None:
        x1, y1 = self.px(b[0]), self.px(b[1])
        # Inclusive pixel corners; a thin line never collapses below one pixel.
        self.draw.rectangle(
            (x1, y1, max(x1, self.px(b[2]) - 1), max(y1, self.px(b[3]) - 1)),
            fill=fill,
            outline=outline,
            width=width,
        )

    def text(self, x: float, y: float, s: str, size: int, color: Any, bold: bool = False) -> None:
        self.draw.text((self.px(x), self.px(y)), s, font=_font(self.px(size), bold), fill=color)

    # --- nodes -------------------------------------------------------------------------------
    def node(
        self,
        cls: str,
        bounds: Sequence[int],
        *,
        rid: str | None = None,
        children: list[dict[str, Any]] | None = None,
        text: str | None = None,
        desc: str | None = None,
        clickable: bool = False,
        focusable: bool = False,
        visibility: str = "visible",
        ancestors: list[str] | None = None,
        hint: str | None = None,
        font_family: str | None = None,
        scroll_v: bool = False,
        scroll_h: bool = False,
        adapter: bool = False,
    ) -> dict[str, Any]:
        """A node with RICO's key set, in the key order of real files (two orders: with and
        without ``resource-id``). ``rel-bounds``, ``visible-to-user`` and empty ``children``
        are settled by ``_finish``."""
        chain = ancestors if ancestors is not None else ANCESTORS[cls]
        common: dict[str, Any] = {
            "ancestors": chain,
            "selected": False,
            "content-desc": [desc],
            "rel-bounds": [0, 0, 0, 0],
            "draw": True,
            "focusable": focusable or clickable,
            "long-clickable": False,
            "visibility": visibility,
            "focused": False,
            "clickable": clickable,
            "abs-pos": True,
        }
        pointer = f"{self.rng.getrandbits(28):x}"
        bounds = list(bounds)
        if rid is not None:
            n: dict[str, Any] = {}
            if text is not None:
                n["text"] = text
            n |= {"resource-id": f"{self.package}:id/{rid}", "adapter-view": adapter, "pointer": pointer}
            n["children"] = children or []
            n["scrollable-horizontal"] = scroll_h
            for k in ("ancestors", "selected", "content-desc", "rel-bounds", "draw", "focusable", "long-clickable"):
                n[k] = common[k]
            n["visibility"] = visibility
            if hint is not None:
                n["text-hint"] = hint
            n |= {"focused": False, "clickable": clickable, "abs-pos": True}
            if font_family is not None:
                n["font-family"] = font_family
            n |= {
                "class": cls,
                "visible-to-user": True,
                "package": self.package,
                "enabled": True,
                "bounds": bounds,
                "pressed": "not_pressed",
                "scrollable-vertical": scroll_v,
            }
            return n
        n = {"scrollable-horizontal": scroll_h, "draw": True, "ancestors": chain, "clickable": clickable}
        n["pressed"] = "not_pressed"
        if text is not None:
            n["text"] = text
        n |= {
            "focusable": focusable or clickable,
            "long-clickable": False,
            "enabled": True,
            "bounds": bounds,
            "visibility": visibility,
            "content-desc": [desc],
            "rel-bounds": [0, 0, 0, 0],
            "focused": False,
            "selected": False,
            "scrollable-vertical": scroll_v,
            "children": children or [],
            "adapter-view": adapter,
            "abs-pos": True,
            "pointer": pointer,
            "class": cls,
            "visible-to-user": True,
        }
        return n

    def label(
        self,
        x: int,
        y: int,
        s: str,
        *,
        size: int = 44,
        color: Any = None,
        bold: bool = False,
        rid: str | None = None,
        cls: str = "android.widget.TextView",
        max_width: int | None = None,
        draw: bool = True,
    ) -> dict[str, Any]:
        """A text view whose bounds hug the drawn text (measured at device size, plus padding)."""
        lines = self.wrap(s, size, bold, max_width) if max_width else [s]
        w = max(self.measure(line, size, bold) for line in lines)
        lh = _line_height(size)
        pad = 6
        bounds = [x, y, x + int(w) + 2 * pad, y + lh * len(lines) + 2 * pad]
        if draw:
            for i, line in enumerate(lines):
                self.text(x + pad, y + pad + i * lh, line, size, color or COLORS["text"], bold)
        return self.node(cls, bounds, rid=rid, text=s, font_family="sans-serif" if bold else None)

    def measure(self, s: str, size: int, bold: bool) -> float:
        """Text width in device px: the wider of the device-size and the drawn-size measure
        (hinting makes small drawn text relatively wider), so the box always holds the glyphs."""
        return max(_text_width(s, size, bold), _text_width(s, self.px(size), bold) / self.scale)

    def wrap(self, s: str, size: int, bold: bool, max_width: int) -> list[str]:
        words, lines, cur = s.split(), [], ""
        for word in words:
            trial = f"{cur} {word}".strip()
            if cur and self.measure(trial, size, bold) > max_width - 12:
                lines.append(cur)
                cur = word
            else:
                cur = trial
        if cur:
            lines.append(cur)
        return lines or [""]

    def icon(self, b: Sequence[int], desc: str, *, rid: str, shape: str = "dots", color: Any = None) -> dict[str, Any]:
        """An icon: pixels only, its label only in ``content-desc`` (no text key)."""
        c = color or COLORS["white"]
        x1, y1, x2, y2 = (self.px(v) for v in b)
        cx, cy, r = (x1 + x2) // 2, (y1 + y2) // 2, max((x2 - x1) // 4, 2)
        if shape == "search":
            self.draw.ellipse((cx - r, cy - r, cx + r // 2, cy + r // 2), outline=c, width=max(r // 4, 1))
            self.draw.line((cx + r // 3, cy + r // 3, cx + r, cy + r), fill=c, width=max(r // 4, 1))
        elif shape == "back":
            self.draw.line((cx - r, cy, cx + r, cy), fill=c, width=max(r // 4, 1))
            self.draw.line((cx - r, cy, cx, cy - r), fill=c, width=max(r // 4, 1))
            self.draw.line((cx - r, cy, cx, cy + r), fill=c, width=max(r // 4, 1))
        else:
            for k in (-1, 0, 1):
                d = max(r // 4, 1)
                self.draw.ellipse((cx - d, cy + k * r - d, cx + d, cy + k * r + d), fill=c)
        return self.node("android.widget.ImageButton", b, rid=rid, desc=desc, clickable=True)

    # --- chrome ------------------------------------------------------------------------------
    def status_bar(self, color: Any = None) -> dict[str, Any]:
        """Drawn status bar (clock, battery); as in RICO its VH node is a bare background view."""
        b = [0, 0, DEVICE_W, STATUS_H]
        self.rect(b, fill=color or COLORS["status"])
        clock = f"{self.rng.randint(7, 22)}:{self.rng.randint(0, 59):02d}"
        self.text(1250, 14, clock, 46, COLORS["white"])
        self.rect([1180, 24, 1220, 62], fill=COLORS["white"])
        n = self.node("android.view.View", b, rid=None)
        n["resource-id"] = "android:id/statusBarBackground"
        return n

    def nav_bar(self) -> dict[str, Any]:
        b = [0, NAV_TOP, DEVICE_W, DEVICE_H]
        self.rect(b, fill=COLORS["nav"])
        c, y = COLORS["white"], (NAV_TOP + DEVICE_H) // 2
        self.draw.polygon(
            [(self.px(330), self.px(y)), (self.px(380), self.px(y - 35)), (self.px(380), self.px(y + 35))], outline=c
        )
        self.draw.ellipse((self.px(685), self.px(y - 35), self.px(755), self.px(y + 35)), outline=c)
        self.rect([1060, y - 32, 1124, y + 32], outline=c)
        return self.node("android.view.View", b)

    def app_bar(self, title: str, *, back: bool = False) -> dict[str, Any]:
        top, bottom = STATUS_H, STATUS_H + APPBAR_H
        self.rect([0, top, DEVICE_W, bottom], fill=COLORS["appbar"])
        kids = []
        x = 56
        if back:
            kids.append(self.icon([28, top + 42, 140, top + 154], "Navigate up", rid="nav_up", shape="back"))
            x = 196
        kids.append(self.label(x, top + 58, title, size=60, color=COLORS["white"], bold=True, rid="toolbar_title"))
        kids.append(self.icon([1148, top + 42, 1260, top + 154], "Search", rid="action_search", shape="search"))
        kids.append(self.icon([1288, top + 42, 1400, top + 154], "More options", rid="action_overflow"))
        # Hidden menu item: a trap (gone, zero area).
        kids.append(
            self.node("android.widget.ImageButton", [1400, top, 1400, top], rid="action_share", visibility="gone")
        )
        return self.node("android.support.v7.widget.Toolbar", [0, top, DEVICE_W, bottom], rid="toolbar", children=kids)

    def window(
        self, content: list[dict[str, Any]], *, bounds: Sequence[int] = (0, 0, DEVICE_W, DEVICE_H)
    ) -> dict[str, Any]:
        """DecorView > LinearLayout > [ViewStub (gone, zero area), content frame]."""
        x1, y1, x2, y2 = bounds
        stub = self.node("android.view.ViewStub", [x1, y1, x1, y1], rid="action_mode_bar_stub", visibility="gone")
        stub["resource-id"] = "android:id/action_mode_bar_stub"
        frame = self.node("android.widget.FrameLayout", [x1, max(y1, STATUS_H), x2, min(y2, NAV_TOP)], children=content)
        frame["resource-id"] = "android:id/content"
        inner = self.node("android.widget.LinearLayout", [x1, y1, x2, min(y2, NAV_TOP)], children=[stub, frame])
        return self.node("com.android.internal.policy.PhoneWindow$DecorView", list(bounds), children=[inner])

    def encode(self) -> bytes:
        buf = io.BytesIO()
        self.image.save(buf, "JPEG", quality=JPEG_QUALITY, optimize=False)
        return buf.getvalue()


# --- kinds ---------------------------------------------------------------------------------------


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _list_rows(sc: _Screen, top: int, bottom: int, *, x_off: int = 0, draw: bool = True) -> list[dict[str, Any]]:
    rng = sc.rng
    rows: list[dict[str, Any]] = []
    row_h, y = 220, top
    i = 0
    while y + row_h <= bottom:
        name = _person(rng)
        msg = rng.choice(MESSAGES)
        when = TIMES[i % len(TIMES)]  # "Yesterday" repeats: duplicate texts on one screen
        b = [x_off, y, x_off + DEVICE_W, y + row_h]
        cx, cy = x_off + 130, y + row_h // 2
        if draw:
            palette = [(239, 83, 80), (66, 165, 245), (102, 187, 106), (255, 167, 38), (171, 71, 188)]
            sc.draw.ellipse(
                (sc.px(cx - 76), sc.px(cy - 76), sc.px(cx + 76), sc.px(cy + 76)), fill=palette[i % len(palette)]
            )
            sc.text(cx - 22, cy - 34, name[0], 56, COLORS["white"], bold=True)
            sc.rect([x_off + 250, y + row_h - 2, x_off + DEVICE_W, y + row_h], fill=COLORS["line"])
        avatar = sc.node("android.support.v7.widget.al", [cx - 76, cy - 76, cx + 76, cy + 76], rid="avatar")
        title = sc.label(x_off + 250, y + 36, name, size=50, bold=True, rid="name", draw=draw)
        sub = sc.label(x_off + 250, y + 116, msg, size=42, color=COLORS["muted"], rid="preview", draw=draw)
        wt = int(_text_width(when, 38, False)) + 12
        stamp = sc.label(
            x_off + DEVICE_W - 56 - wt, y + 40, when, size=38, color=COLORS["muted"], rid="time", draw=draw
        )
        badge = sc.node("android.widget.TextView", [x_off + 1300, y + 140, x_off + 1300, y + 140], rid="unread")
        badge["text"] = ""
        badge["visibility"] = "invisible"
        rows.append(
            sc.node(
                "android.widget.RelativeLayout",
                b,
                rid="row",
                clickable=True,
                children=[avatar, title, sub, stamp, badge],
            )
        )
        y += row_h
        i += 1
    return rows


def _kind_list(sc: _Screen) -> dict[str, Any]:
    title = sc.rng.choice(["Contacts", "Messages", "Chats"])
    bar = sc.app_bar(title)
    top = STATUS_H + APPBAR_H
    # A pager with three pages: the visible one and two off-screen at x = 1440 and 2880.
    pages = []
    for p in range(3):
        # Off-screen pages hold fewer rows: enough for the trap, smaller files.
        rows = _list_rows(sc, top, NAV_TOP if p == 0 else top + 660, x_off=p * DEVICE_W, draw=p == 0)
        pages.append(
            sc.node(
                "android.support.v7.widget.RecyclerView",
                [p * DEVICE_W, top, (p + 1) * DEVICE_W, NAV_TOP],
                rid="list",
                children=rows,
                scroll_v=True,
            )
        )
    # Inverted bounds, as RICO records for views scrolled past the edge.
    pages.append(sc.node("android.view.View", [1480, top + 40, 1440, top + 170]))
    empty = sc.node("android.widget.TextView", [0, top, 0, top], rid="empty", text="No conversations yet")
    empty["visibility"] = "gone"
    pager = sc.node(
        "android.support.v4.view.ViewPager", [0, top, DEVICE_W, NAV_TOP], rid="pager", children=[*pages, empty]
    )
    return sc.node("android.widget.LinearLayout", [0, STATUS_H, DEVICE_W, NAV_TOP], children=[bar, pager])


def _checkbox(sc: _Screen, b: Sequence[int], checked: bool, rid: str) -> dict[str, Any]:
    """A checkbox: the state is drawn only; RICO has no checked key (``text`` is "")."""
    x1, y1, x2, y2 = b
    m = 24
    box = [x1 + m, y1 + m, x2 - m, y2 - m]
    if checked:
        sc.rect(box, fill=COLORS["accent"])
        pts = [
            (box[0] + 18, (box[1] + box[3]) // 2),
            ((box[0] + box[2]) // 2 - 6, box[3] - 20),
            (box[2] - 14, box[1] + 18),
        ]
        sc.draw.line([(sc.px(a), sc.px(c)) for a, c in pts], fill=COLORS["white"], width=max(sc.px(10), 2))
    else:
        sc.rect(box, outline=COLORS["muted"], width=max(sc.px(8), 2))
    return sc.node("android.widget.CheckBox", b, rid=rid, text="", clickable=True)


def _kind_settings(sc: _Screen) -> dict[str, Any]:
    bar = sc.app_bar("Settings", back=True)
    top = STATUS_H + APPBAR_H
    rows = []
    y = top + 20
    header = sc.label(56, y, "General", size=40, color=COLORS["accent"], bold=True, rid="category")
    rows.append(header)
    y += 100
    items = list(SETTINGS)
    sc.rng.shuffle(items)
    for i, (title, summary) in enumerate(items[:7]):
        h = 230
        t = sc.label(56, y + 40, title, size=52, rid="title")
        s = sc.label(56, y + 122, summary, size=40, color=COLORS["muted"], rid="summary")
        cb = _checkbox(sc, [1240, y + 55, 1384, y + 175], sc.rng.random() < 0.5, rid="checkbox")
        sc.rect([0, y + h - 2, DEVICE_W, y + h], fill=COLORS["line"])
        rows.append(
            sc.node("android.widget.LinearLayout", [0, y, DEVICE_W, y + h], clickable=True, children=[t, s, cb])
        )
        y += h
        if i == 2:
            # A preference hidden on this device: gone, zero area.
            hidden = sc.node("android.widget.LinearLayout", [0, y, 0, y], visibility="gone")
            hidden["children"] = [sc.node("android.widget.CheckBox", [0, y, 0, y], rid="checkbox", text="")]
            rows.append(hidden)
    version = f"Version {sc.rng.randint(1, 9)}.{sc.rng.randint(0, 20)}.{sc.rng.randint(0, 9)}"
    rows.append(sc.label(56, y + 40, version, size=38, color=COLORS["muted"], cls="android.support.v7.widget.ay"))
    lst = sc.node(
        "android.widget.ListView", [0, top, DEVICE_W, NAV_TOP], rid="list", children=rows, adapter=True, scroll_v=True
    )
    return sc.node("android.widget.LinearLayout", [0, STATUS_H, DEVICE_W, NAV_TOP], children=[bar, lst])


def _text_field(sc: _Screen, y: int, hint: str, value: str, rid: str) -> dict[str, Any]:
    b = [120, y, 1320, y + 150]
    sc.rect([120, y + 146, 1320, y + 150], fill=COLORS["accent"])
    shown = value or hint
    sc.text(140, y + 40, shown, 50, COLORS["text"] if value else COLORS["muted"])
    return sc.node("android.widget.EditText", b, rid=rid, text=value, hint=hint, clickable=True)


def _kind_login(sc: _Screen) -> dict[str, Any]:
    app = sc.package.rsplit(".", 1)[-1].capitalize()
    kids: list[dict[str, Any]] = []
    # Logo: a drawn square with the app's initial; an image, so no text in the VH.
    sc.rect([570, 300, 870, 600], fill=COLORS["appbar"])
    sc.text(665, 355, app[0], 170, COLORS["white"], bold=True)
    kids.append(sc.node("android.widget.ImageView", [570, 300, 870, 600], rid="logo", desc=f"{app} logo"))
    heading = f"Welcome to {app}"
    w = int(_text_width(heading, 64, True)) + 12
    kids.append(sc.label((DEVICE_W - w) // 2, 660, heading, size=64, bold=True, rid="welcome"))
    email = sc.rng.choice(["", f"{sc.rng.choice(FIRST).lower()}@example.com"])
    kids.append(_text_field(sc, 860, "Email", email, "email"))
    kids.append(_text_field(sc, 1070, "Password", "", "password"))
    sc.rect([120, 1330, 1320, 1480], fill=COLORS["accent"])
    bw = int(_text_width("SIGN IN", 52, True))
    sc.text((DEVICE_W - bw) // 2, 1372, "SIGN IN", 52, COLORS["white"], bold=True)
    kids.append(
        sc.node("android.widget.Button", [120, 1330, 1320, 1480], rid="sign_in", text="SIGN IN", clickable=True)
    )
    fw = int(_text_width("Forgot password?", 44, False)) + 12
    forgot = sc.label((DEVICE_W - fw) // 2, 1540, "Forgot password?", size=44, color=COLORS["accent"], rid="forgot")
    forgot["clickable"] = True
    kids.append(forgot)
    # A whole paragraph in one node.
    kids.append(sc.label(120, 1700, PARAGRAPH, size=38, color=COLORS["muted"], rid="terms", max_width=1200))
    error = sc.node("android.widget.TextView", [120, 1480, 120, 1480], rid="error", text="Wrong password")
    error["visibility"] = "gone"
    kids.append(error)
    scroll = sc.node(
        "android.widget.ScrollView",
        [0, STATUS_H, DEVICE_W, NAV_TOP],
        rid="scroll",
        scroll_v=True,
        children=[sc.node("android.widget.LinearLayout", [0, STATUS_H, DEVICE_W, NAV_TOP], children=kids)],
    )
    return scroll


def _kind_dialog(sc: _Screen) -> tuple[dict[str, Any], tuple[int, int, int, int]]:
    """A dialog over dimmed content: the content behind is drawn but has no VH at all."""
    sc.app_bar("Inbox")
    _list_rows(sc, STATUS_H + APPBAR_H, NAV_TOP)
    # Dim everything drawn so far, status bar included (as in RICO dialog screenshots).
    dim = Image.new("RGB", sc.image.size, (0, 0, 0))
    sc.image = Image.blend(sc.image, dim, 0.55)
    sc.draw = ImageDraw.Draw(sc.image)
    win = (160, 84, 1280, 2392) if sc.rng.random() < 0.3 else (160, 860, 1280, 1700)
    x1, y1, x2, y2 = win
    sc.rect(list(win), fill=COLORS["white"])
    kids: list[dict[str, Any]] = []
    title = sc.rng.choice(["Delete conversation?", "Leave group?", "Discard draft?"])
    kids.append(sc.label(x1 + 70, y1 + 70, title, size=58, bold=True, rid="alertTitle"))
    msg = f"This cannot be undone. {_person(sc.rng)} will no longer see your messages in this thread."
    kids.append(
        sc.label(x1 + 70, y1 + 200, msg, size=42, color=COLORS["muted"], rid="message", max_width=x2 - x1 - 140)
    )
    for label, bx in (("CANCEL", x2 - 520), ("OK", x2 - 220)):
        bw = int(_text_width(label, 46, True)) + 48
        b = [bx, y2 - 170, bx + bw, y2 - 50]
        sc.text(bx + 24, y2 - 140, label, 46, COLORS["accent"], bold=True)
        kids.append(
            sc.node(
                "android.widget.Button", b, rid="button1" if label == "OK" else "button2", text=label, clickable=True
            )
        )
    card = sc.node("android.support.v7.widget.CardView", list(win), rid="dialog_card", children=kids)
    return card, win


def _web_content(sc: _Screen, top: int) -> None:
    """Web page pixels: headline, image block, paragraphs. None of it is in the VH."""
    y = top + 40
    headline = sc.rng.choice(WEB_TITLES)
    for line in sc.wrap(headline, 70, True, 1300):
        sc.text(60, y, line, 70, COLORS["text"], bold=True)
        y += _line_height(70)
    y += 30
    sc.rect([60, y, 1380, y + 560], fill=(176, 190, 197))
    sc.draw.polygon(
        [(sc.px(200), sc.px(y + 520)), (sc.px(600), sc.px(y + 180)), (sc.px(900), sc.px(y + 520))], fill=(120, 144, 156)
    )
    y += 620
    for _ in range(3):
        for line in sc.wrap(WEB_TEXT, 44, False, 1320):
            if y > NAV_TOP - 80:
                return
            sc.text(60, y, line, 44, COLORS["text"])
            y += _line_height(44)
        y += 40


def _kind_webview(sc: _Screen) -> dict[str, Any]:
    top = STATUS_H + APPBAR_H
    sc.rect([0, STATUS_H, DEVICE_W, top], fill=(245, 245, 245))
    sc.rect([40, STATUS_H + 40, 1260, top - 40], fill=COLORS["white"], outline=COLORS["line"], width=2)
    url = f"https://news.example.org/{sc.rng.randint(100, 999)}"
    urlnode = sc.label(70, STATUS_H + 58, url, size=46, rid="url")
    tabs = sc.icon([1288, STATUS_H + 42, 1400, STATUS_H + 154], "More options", rid="menu", color=COLORS["text"])
    bar = sc.node("android.widget.LinearLayout", [0, STATUS_H, DEVICE_W, top], rid="titlebar", children=[urlnode, tabs])
    _web_content(sc, top)
    web = sc.node(
        f"{sc.package}.ui.ArticleWebView",
        [0, top, DEVICE_W, NAV_TOP],
        ancestors=WEBVIEW_ANCESTORS,
        clickable=True,
        scroll_v=True,
        scroll_h=True,
    )
    return sc.node("android.widget.LinearLayout", [0, STATUS_H, DEVICE_W, NAV_TOP], children=[bar, web])


APPS = {
    "list": ["com.demo.chatter", "com.demo.contactbook"],
    "settings": ["com.demo.chatter", "com.demo.notesync"],
    "login": ["com.demo.shopfast", "com.demo.notesync"],
    "dialog": ["com.demo.chatter", "com.demo.mailbox"],
    "webview": ["com.demo.newsreader"],
}
ACTIVITIES = {
    "list": "MainActivity",
    "settings": "SettingsActivity",
    "login": "LoginActivity",
    "dialog": "ConversationActivity",
    "webview": "ArticleActivity",
}


def _finish(node: dict[str, Any], parent: Sequence[int] | None, shown: bool) -> None:
    """Set ``rel-bounds`` (relative to the parent), ``visible-to-user`` (shown, visible,
    positive area, on screen), and drop empty ``children`` (RICO leaves have none)."""
    b = node["bounds"]
    px, py = (parent[0], parent[1]) if parent else (0, 0)
    node["rel-bounds"] = [b[0] - px, b[1] - py, b[2] - px, b[3] - py]
    shown = shown and node["visibility"] == "visible"
    on_screen = b[2] > b[0] and b[3] > b[1] and b[0] < DEVICE_W and b[1] < DEVICE_H and b[2] > 0 and b[3] > 0
    node["visible-to-user"] = bool(shown and on_screen)
    if not node["visible-to-user"]:
        node["draw"] = False
    kids = node.get("children")
    if kids:
        for kid in kids:
            _finish(kid, b, shown)
    elif "children" in node:
        del node["children"]


def render_screen(
    *, rico_id: int | str, kind: str, size: tuple[int, int], seed: int = 0, package: str | None = None
) -> GeneratedScreen:
    """One screen in memory. Same arguments, same bytes. ``package``: the app (default one of the
    kind's demo apps)."""
    if kind not in KINDS:
        raise ValueError(f"unknown screen kind {kind!r}; choose from {', '.join(KINDS)}")
    width, height = size
    if width <= 0 or height <= 0:
        raise ValueError(f"invalid size {size!r}")
    rng = random.Random(f"{seed}:{rico_id}:{kind}:{width}")
    chosen = rng.choice(APPS[kind])
    package = package or chosen
    sc = _Screen(rng=rng, width=width, height=height, package=package)
    status = sc.status_bar()
    if kind == "dialog":
        card, win = _kind_dialog(sc)
        root = sc.window([card], bounds=win)
    else:
        content = {"list": _kind_list, "settings": _kind_settings, "login": _kind_login, "webview": _kind_webview}[
            kind
        ](sc)
        nav = sc.nav_bar()
        root = sc.window([content])
        root["children"].extend([nav, status])
    if kind == "dialog":
        sc.nav_bar()  # drawn, but outside the dialog window: no node
    _finish(root, None, True)
    fragments: list[str] = [f"{rng.getrandbits(32):08x}"] if kind == "list" else []
    vh = {
        "activity_name": f"{package}/{package}.{ACTIVITIES[kind]}",
        "activity": {"root": root, "added_fragments": fragments, "active_fragments": list(fragments)},
        "is_keyboard_deployed": False,
        "request_id": str(rng.randint(1, 3000)),
    }
    return GeneratedScreen(rico_id=str(rico_id), kind=kind, width=width, height=height, image=sc.encode(), vh=vh)


def plan(
    *, count: int, start_id: int = 900000, sizes: Sequence[tuple[int, int]] = SIZES, kinds: Sequence[str] | None = None
) -> Iterator[tuple[int, str, tuple[int, int]]]:
    """``(rico_id, kind, size)`` per screen: kinds cycle fastest, then sizes, so any
    ``len(kinds) * len(sizes)`` consecutive screens cover every combination."""
    if count < 0:
        raise ValueError("count must be >= 0")
    ks = tuple(kinds) if kinds else KINDS
    unknown = [k for k in ks if k not in KINDS]
    if unknown or not sizes:
        raise ValueError(f"unknown kinds {unknown}" if unknown else "no sizes")
    for i in range(count):
        yield start_id + i, ks[i % len(ks)], tuple(sizes[(i // len(ks)) % len(sizes)])  # type: ignore[misc]


def iter_screens(
    *,
    count: int,
    seed: int = 0,
    start_id: int = 900000,
    sizes: Sequence[tuple[int, int]] = SIZES,
    kinds: Sequence[str] | None = None,
    workers: int = 1,
) -> Iterator[GeneratedScreen]:
    """The screens of ``plan`` in order. ``workers > 1`` renders on that many processes
    (same bytes: a screen depends only on its own arguments)."""
    jobs = plan(count=count, start_id=start_id, sizes=sizes, kinds=kinds)
    if workers <= 1:
        for rico_id, kind, size in jobs:
            yield render_screen(rico_id=rico_id, kind=kind, size=size, seed=seed)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(_render_job, ((rid, kind, size, seed) for rid, kind, size in jobs), chunksize=16)


def _render_job(job: tuple[int, str, tuple[int, int], int]) -> GeneratedScreen:
    rico_id, kind, size, seed = job
    return render_screen(rico_id=rico_id, kind=kind, size=size, seed=seed)


def generate_screens(
    out_dir: Path,
    *,
    count: int,
    seed: int = 0,
    start_id: int = 900000,
    sizes: Sequence[tuple[int, int]] = SIZES,
    kinds: Sequence[str] | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int = 1,
) -> list[str]:
    """Write ``<id>.jpg`` + ``<id>.json`` for ``count`` screens into ``out_dir``; return the ids.

    Deterministic for a seed (same bytes on re-run); overwrites files of the same ids.
    ``progress(n)`` is called after each screen with the number written so far.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ids = []
    for n, s in enumerate(
        iter_screens(count=count, seed=seed, start_id=start_id, sizes=sizes, kinds=kinds, workers=workers), 1
    ):
        (out_dir / f"{s.rico_id}.jpg").write_bytes(s.image)
        (out_dir / f"{s.rico_id}.json").write_bytes(s.vh_bytes())
        ids.append(s.rico_id)
        if progress:
            progress(n)
    return ids


def generate_zip(
    path: Path,
    *,
    count: int,
    seed: int = 0,
    start_id: int = 900000,
    sizes: Sequence[tuple[int, int]] = SIZES,
    kinds: Sequence[str] | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int = 1,
) -> list[str]:
    """The same screens as ``generate_screens``, as flat entries of one zip (JPEGs stored,
    JSON deflated; fixed timestamps so the zip is byte-identical on re-run)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ids = []
    stamp = (2020, 1, 1, 0, 0, 0)
    with zipfile.ZipFile(path, "w") as zf:
        screens: Iterable[GeneratedScreen] = iter_screens(
            count=count, seed=seed, start_id=start_id, sizes=sizes, kinds=kinds, workers=workers
        )
        for n, s in enumerate(screens, 1):
            zf.writestr(zipfile.ZipInfo(f"{s.rico_id}.jpg", stamp), s.image, compress_type=zipfile.ZIP_STORED)
            zf.writestr(zipfile.ZipInfo(f"{s.rico_id}.json", stamp), s.vh_bytes(), compress_type=zipfile.ZIP_DEFLATED)
            ids.append(s.rico_id)
            if progress:
                progress(n)
    return ids
