"""The baseline suggestion backend (``devtools.assist_baseline``) on real ScreenQA questions.

For every question of ``short_answers/{validation,test}.json`` whose screen is among the RICO screens
of ``../shared/data/rico/screens`` (joined on ``image_id``), the screen's candidates are built as the
importer builds them (``annotation.vh.vh_candidates``), and the **answer elements** are the
candidates whose text matches one of the question's short answers (SQuAD-normalised: equal, or the
answer contained in the candidate's text as whole words). Questions with no such candidate (the
answer is a drawn box, a ``<no answer>``, or text the VH does not hold) are counted and left out.
The ranker's **top-1** (the first-ranked candidate is an answer element) and **top-3** accuracy
are measured on the rest.

**The scripted crowd** (``crowd``): on the same screens, a careful scripted writer's questions (the
questions stage's ``crowd_submission``), answered by each profile of ``devtools.crowd`` with the ranker's
suggestion shown; each answer is classified as the product classifies it (the answers stage's ``suggestion_use``:
accepted unchanged, edited, none), and the ranker's top-1/top-3 is measured against the scripted truth
(the ``TRUTH`` profile's elements). No database: the crowd's and the product's own functions.

    python -m devtools.bench.bench_assist [--write docs/assist_benchmark.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from PIL import Image

from annotation.vh import VHError, parse_vh, vh_candidates
from devtools.assist_baseline.ranker import rank
from pipeline.metrics.squad import NO_ANSWER, normalize_answer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
SCREENS = DATA / "rico" / "screens"
SHORT_ANSWERS = DATA / "screen_qa" / "short_answers"
SPLITS = ("validation", "test")
OUTPUT = ROOT / "docs" / "assist_benchmark.json"
DEVICE_WIDTH = 1440


def _candidates(rico_id: str) -> tuple[list[dict[str, Any]], int, int] | None:
    raw = (SCREENS / f"{rico_id}.json").read_bytes()
    with Image.open(SCREENS / f"{rico_id}.jpg") as image:
        width, height = image.size
    try:
        vh = parse_vh(raw, max_depth=200)
        found = vh_candidates(vh, image_width=width, image_height=height, device_width=DEVICE_WIDTH)
    except VHError:
        return None
    candidates = [
        {"vh_index": c.vh_index, "bounds": [c.left, c.top, c.right, c.bottom], "text": c.text or c.content_desc}
        for c in found
    ]
    return candidates, width, height


def _matches(text: str, answers: list[str]) -> bool:
    have = normalize_answer(text)
    if not have:
        return False
    for answer in answers:
        want = normalize_answer(answer)
        if want and (have == want or re.search(rf"(^| ){re.escape(want)}( |$)", have)):
            return True
    return False


def measure() -> dict[str, Any]:
    if not SCREENS.is_dir() or not SHORT_ANSWERS.is_dir():
        return {"skipped": f"no data at {DATA}"}
    rico_ids = {path.stem for path in SCREENS.glob("*.json")}
    screens: dict[str, Any] = {}
    figures: dict[str, Any] = {"splits": {}, "examples": []}
    total = {"questions": 0, "no_element": 0, "measured": 0, "top1": 0, "top3": 0}
    for split in SPLITS:
        rows = json.loads((SHORT_ANSWERS / f"{split}.json").read_text())
        counts = {"questions": 0, "no_element": 0, "measured": 0, "top1": 0, "top3": 0}
        for row in rows:
            rico_id = str(row["image_id"])
            if rico_id not in rico_ids:
                continue
            counts["questions"] += 1
            answers = [a for a in row["ground_truth"] if a != NO_ANSWER]
            if rico_id not in screens:
                screens[rico_id] = _candidates(rico_id)
            screen = screens[rico_id]
            if screen is None or not answers:
                counts["no_element"] += 1
                continue
            candidates, width, height = screen
            right = {c["vh_index"] for c in candidates if _matches(c["text"], answers)}
            if not right:
                counts["no_element"] += 1
                continue
            ranked = [i for i, _ in rank(question=row["question"], candidates=candidates, width=width, height=height)]
            counts["measured"] += 1
            counts["top1"] += ranked[0] in right
            counts["top3"] += bool(set(ranked[:3]) & right)
            by_index = {c["vh_index"]: c["text"] for c in candidates}
            figures["examples"].append(
                {
                    "split": split,
                    "image_id": row["image_id"],
                    "question": row["question"],
                    "answers": answers[:3],
                    "top3": [by_index[i] for i in ranked[:3]],
                    "hit": "top1" if ranked[0] in right else "top3" if set(ranked[:3]) & right else "miss",
                }
            )
        figures["splits"][split] = _rates(counts)
        for key in total:
            total[key] += counts[key]
    figures["all"] = _rates(total)
    figures["candidates_per_screen"] = round(
        sum(len(s[0]) for s in screens.values() if s) / max(1, sum(1 for s in screens.values() if s)), 1
    )
    figures["method"] = (
        "real ScreenQA validation/test questions whose RICO screen is in ../shared/data/rico/screens (join on "
        "image_id); answer elements: candidates whose text matches a short answer (SQuAD-normalised, equal or "
        "contained as whole words); questions with no such candidate are left out (no_element)"
    )
    return figures


def crowd(*, questions_per_screen: int = 5, seed: int = 7) -> dict[str, Any]:
    """Acceptance of the ranker's suggestions by each scripted profile, and the ranker's top-1/top-3
    against the scripted truth, over the questions a careful scripted writer asks of the real screens."""
    from devtools.crowd import PROFILES, TRUTH, ScriptedAnnotator
    from pipeline.engine import stage_get

    if not SCREENS.is_dir():
        return {"skipped": f"no data at {DATA}"}
    writer = ScriptedAnnotator(username="writer", seed=seed)
    answerers = {name: ScriptedAnnotator(username=name, seed=seed, profile=p) for name, p in PROFILES.items()}
    truth = ScriptedAnnotator(username="truth", seed=seed, profile=TRUTH)
    answers = stage_get("answers")
    uses: dict[str, dict[str, int]] = {name: {"accepted": 0, "edited": 0, "none": 0} for name in PROFILES}
    ranked_counts = {"questions": 0, "measured": 0, "top1": 0, "top3": 0}
    for path in sorted(SCREENS.glob("*.json")):
        found = _candidates(path.stem)
        if found is None:
            continue
        candidates, width, height = found
        screen = {"rico_id": path.stem, "width": width, "height": height, "candidates": candidates}
        payload = {"stage": "questions-1", "screen": screen, "max_questions": questions_per_screen}
        asked = stage_get("questions-1").crowd_submission(payload=payload, actor=writer)["questions"]
        for n, question in enumerate(asked):
            ranked = rank(question=question, candidates=candidates, width=width, height=height)
            by_index = {c["vh_index"]: c for c in candidates}
            suggestion = {
                "elements": [
                    {"vh_index": i, "bounds": by_index[i]["bounds"], "text": by_index[i]["text"], "score": score}
                    for i, score in ranked[:3]
                ]
            }
            answers_payload = {"stage": "answers", "screen": screen, "question": {"id": n, "text": question}}
            ranked_counts["questions"] += 1
            right = {
                e["vh_index"] for e in truth.work(answers_payload).get("elements", []) if e.get("vh_index") is not None
            }
            if right:
                ranked_counts["measured"] += 1
                ranked_counts["top1"] += ranked[0][0] in right
                ranked_counts["top3"] += bool({i for i, _ in ranked[:3]} & right)
            for name, actor in answerers.items():
                body = actor.work({**answers_payload, "suggestion": suggestion})
                uses[name][str(answers.suggestion_use(suggestion=suggestion, cleaned=body))] += 1
    profiles = {
        name: {**counts, "accepted_share": round(counts["accepted"] / max(1, sum(counts.values())), 3)}
        for name, counts in uses.items()
    }
    return {
        "screens": len({p.stem for p in SCREENS.glob("*.json")}),
        "ranker_on_crowd_questions": {**ranked_counts, **_rates({**ranked_counts, "no_element": 0})},
        "profiles": profiles,
        "method": (
            "questions a careful scripted writer asks of the real screens (questions-1 crowd_submission, up to "
            f"{questions_per_screen} a screen, seed {seed}); each profile answers with the ranker's top-3 shown; "
            "accepted = the product's Answers.suggestion_use (exactly the first-ranked element, its text unchanged); "
            "the ranker's hits against the TRUTH profile's elements (questions it answers with a VH element)"
        ),
    }


def prefilter() -> dict[str, Any]:
    """The baseline's pre-filtering suggestion on the real screens. Every screen of ScreenQA comes from an
    app the paper's annotators judged English, so each "non-English" suggestion is a false alarm; the
    sync is "cannot tell" (0.5) from the VH alone, which suggests no flag."""
    from devtools.assist_baseline.ranker import judgments
    from pipeline.assist.service import JUDGMENT_SUGGESTED_ABOVE

    if not SCREENS.is_dir():
        return {"skipped": f"no data at {DATA}"}
    counts = {"screens": 0, "unreadable": 0, "non_english_suggested": 0, "out_of_sync_suggested": 0}
    for path in sorted(SCREENS.glob("*.json")):
        screen = _candidates(path.stem)
        if screen is None:
            counts["unreadable"] += 1
            continue
        guessed = judgments(candidates=screen[0])
        counts["screens"] += 1
        counts["non_english_suggested"] += guessed["non_english_app"] > JUDGMENT_SUGGESTED_ABOVE
        counts["out_of_sync_suggested"] += guessed["vh_out_of_sync"] > JUDGMENT_SUGGESTED_ABOVE
    return {
        **counts,
        "false_non_english_rate": round(counts["non_english_suggested"] / max(1, counts["screens"]), 3),
        "method": "the baseline's judgments on every real RICO screen of ../shared/data (all of English apps, "
        "as ScreenQA kept only those); a judgment is suggested above 0.5",
    }


def _rates(counts: dict[str, int]) -> dict[str, Any]:
    measured = counts["measured"] or 1
    return {
        **counts,
        "top1_accuracy": round(counts["top1"] / measured, 3),
        "top3_accuracy": round(counts["top3"] / measured, 3),
    }


def run(full: bool) -> dict[str, Any]:
    figures = measure()
    figures.pop("examples", None)
    figures["crowd"] = crowd()
    figures["prefilter"] = prefilter()
    return figures


def main(argv: list[str] | None = None) -> int:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings.test")  # the crowd's stages: no queries
    django.setup()
    parser = argparse.ArgumentParser(prog="python -m devtools.bench.bench_assist")
    parser.add_argument("--write", default="", help=f"write the figures as JSON here (e.g. {OUTPUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    figures = measure()
    figures["crowd"] = crowd()
    figures["prefilter"] = prefilter()
    text = json.dumps(figures, indent=2, ensure_ascii=False) + "\n"
    if args.write:
        Path(args.write).write_text(text)
    print(json.dumps({k: v for k, v in figures.items() if k != "examples"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
