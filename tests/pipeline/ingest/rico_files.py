"""Small RICO-format pairs made on the fly (Pillow images + VH JSON) for the import tests."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from PIL import Image


def jpeg_bytes(width: int = 144, height: int = 256, color: str = "white") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, "JPEG", quality=80)
    return buf.getvalue()


def png_bytes(width: int = 144, height: int = 256) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), "navy").save(buf, "PNG")
    return buf.getvalue()


def node(bounds: list[Any], *, cls: str = "android.widget.TextView", visible: bool = True, **extra: Any) -> dict:
    ancestors = {
        "android.widget.TextView": ["android.view.View", "java.lang.Object"],
        "android.widget.FrameLayout": ["android.view.ViewGroup", "android.view.View", "java.lang.Object"],
    }.get(cls, ["android.view.View", "java.lang.Object"])
    return {
        "class": cls,
        "ancestors": ancestors,
        "bounds": bounds,
        "visible-to-user": visible,
        "content-desc": [None],
        **extra,
    }


def vh_dict(package: str = "com.example.app", *, children: list[dict] | None = None) -> dict:
    """Root (0) -> [title (1), hidden (2), button (3)] unless ``children`` is given."""
    if children is None:
        children = [
            node([0, 84, 1440, 252], text="Title"),
            node([0, 0, 0, 0], visible=False, text="hidden"),
            node(
                [1000, 2300, 1400, 2500],
                cls="android.widget.Button",
                text="OK",
                ancestors=["android.widget.TextView", "android.view.View"],
            ),
        ]
    root = node([0, 0, 1440, 2560], cls="android.widget.FrameLayout", children=children)
    return {
        "activity_name": f"{package}/{package}.MainActivity",
        "activity": {"root": root},
        "is_keyboard_deployed": False,
        "request_id": "1",
    }


def vh_bytes(package: str = "com.example.app", **kwargs: Any) -> bytes:
    return json.dumps(vh_dict(package, **kwargs)).encode()


def write_pair(
    folder: Path, rico_id: str, *, image: bytes | None = None, vh: bytes | None = None, ext: str = "jpg"
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{rico_id}.{ext}").write_bytes(image if image is not None else jpeg_bytes())
    (folder / f"{rico_id}.json").write_bytes(vh if vh is not None else vh_bytes())
