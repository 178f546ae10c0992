"""The scorer against the release's own code on real data, example by example (issue 11 §1).

Gold: every real validation question of ScreenQA Short (8,614) with its real short answers; its
raters' element lists are made from real RICO candidates (the visible leaves of the 63 real
screens in ../shared/data/rico/screens, boxes in screenshot pixels), one rater per acceptable
answer (up to three), a ``<no answer>`` becoming an empty list, as in the release.
Predictions: perturbed copies (the answers' real variants, other questions' answers, no-answer
spellings, texts that normalise to nothing; boxes shifted, swapped for other candidates or for raw
VH boxes that are inverted, zero-area or off-screen; elements dropped, added, reordered), and ~5%
of the questions left without a prediction.

Written as release-format gold files and a prediction file and scored end to end (``scoring_run``,
what the ``score`` command runs), every per-example figure of SQA-S, SQA-UIC and SQA-UIC-BB must
equal the reference's within 1e-12, and both averages must be the reference's averages.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from PIL import Image

from annotation.vh import iter_nodes, node_bounds, parse_vh, vh_candidates, vh_root
from pipeline.metrics.scorer import GoldExample, Key, Prediction, Rater, scoring_run
from pipeline.metrics.uic import Element
from tests.pipeline.metrics.reference import TOLERANCE, ref_elements

pytestmark = pytest.mark.realdata

NA = "<no answer>"
NO_ANSWER_SPELLINGS = ["<no answer>", "<<<no answer>>>", "<No Answer>", " <no answer> ", "no answer"]
EMPTY_AFTER_NORMALISATION = ["$", "The", "the +", "", "..."]
TASKS = {"sqa_s": ("em", "f1"), "sqa_uic": ("em", "f1"), "sqa_uic_bb": ("bbox_f1", "em", "f1")}


def rico_screens(shared_data: Path) -> list[tuple[list[Element], list[tuple[int, int, int, int]]]]:
    """Per real screen: its candidates as elements (text or content description) and its raw boxes.

    Raw boxes are every node's VH bounds scaled to pixels without clipping or checks: about a third
    are zero-area or inverted, some lie off-screen (pager pages).
    """
    screens = []
    for path in sorted((shared_data / "rico" / "screens").glob("*.json")):
        with Image.open(path.with_suffix(".jpg")) as image:
            width, height = image.size
        vh = parse_vh(path.read_bytes(), max_depth=200)
        candidates = vh_candidates(vh, image_width=width, image_height=height, device_width=1440)
        elements = [Element(c.text or c.content_desc or c.type, (c.left, c.top, c.right, c.bottom)) for c in candidates]
        raw = []
        for index, _, node in iter_nodes(vh_root(vh)):
            bounds = node_bounds(node, index)
            if bounds is not None:
                raw.append(tuple(int(v) * width // 1440 for v in bounds))
        if elements:
            screens.append((elements, raw))
    return screens


def _short_prediction(rng: random.Random, answers: list[str], records: list[dict[str, Any]]) -> str:
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(answers)
    if roll < 0.45:
        return rng.choice(rng.choice(records)["ground_truth"])  # another question's answer
    if roll < 0.55:
        return rng.choice(NO_ANSWER_SPELLINGS)
    if roll < 0.60:
        return rng.choice(EMPTY_AFTER_NORMALISATION)
    words = rng.choice(answers).split()
    if roll < 0.75 and len(words) > 1:
        words.pop(rng.randrange(len(words)))  # a word missing
    elif roll < 0.90:
        words.insert(rng.randrange(len(words) + 1), rng.choice(["the", "a", "of", "new", "$", "2017", "on"]))
    text = " ".join(words)
    return text.upper() if rng.random() < 0.2 else text


def _box_prediction(rng: random.Random, element: Element, pool: list[Element], raw: list) -> Element:
    assert element.bounds is not None
    roll = rng.random()
    if roll < 0.4:
        return element
    if roll < 0.75:  # shifted and resized, from a few pixels to well past IoU 0.1
        scale = rng.choice([3, 10, 40, 150])
        left, top, right, bottom = element.bounds
        moved = tuple(v + rng.randint(-scale, scale) for v in (left, top, right, bottom))
        return Element(element.text, moved)  # type: ignore[arg-type]
    if roll < 0.9:
        return Element(element.text, rng.choice(pool).bounds)  # the box of another candidate
    return Element(element.text, rng.choice(raw) if raw else element.bounds)  # raw VH: inverted, flat...


def _elements_prediction(
    rng: random.Random, raters: list[Rater], pool: list[Element], raw: list, answers: list[str]
) -> tuple[Element, ...]:
    if rng.random() < 0.08:
        return ()
    base = list(rng.choice(raters).elements) or [rng.choice(pool)]
    out = [_box_prediction(rng, e, pool, raw) for e in base]
    if rng.random() < 0.2:
        out = [Element(rng.choice([e.text, e.text.lower(), rng.choice(answers)]), e.bounds) for e in out]
    if len(out) > 1 and rng.random() < 0.2:
        out.pop(rng.randrange(len(out)))
    if rng.random() < 0.25:
        extra = rng.choice(pool)
        out.insert(rng.randrange(len(out) + 1), extra)
    if rng.random() < 0.1:
        rng.shuffle(out)
    return tuple(out)


def real_examples(
    shared_data: Path, *, seed: int = 11
) -> tuple[dict[Key, GoldExample], dict[Key, Prediction], list[dict[str, Any]]]:
    records = json.loads((shared_data / "screen_qa" / "short_answers" / "validation.json").read_text())
    screens = rico_screens(shared_data)
    rng = random.Random(seed)
    gold: dict[Key, GoldExample] = {}
    preds: dict[Key, Prediction] = {}
    for i, record in enumerate(records):
        key = (record["image_id"], record["question"])
        answers = record["ground_truth"]
        pool, raw = screens[i % len(screens)]
        raters = []
        for answer in answers[:3]:
            if answer == NA:
                raters.append(Rater("", ()))
                continue
            picks = rng.sample(pool, min(len(pool), rng.choice([1, 1, 1, 2, 3])))
            # the answer's text on the first element; the others keep their screen text
            elements = [Element(answer if k == 0 else p.text, p.bounds) for k, p in enumerate(picks)]
            raters.append(Rater(f"The answer is {answer}.", tuple(elements)))
        gold[key] = GoldExample(key[0], key[1], short_answers=list(answers), raters=raters)
        if rng.random() < 0.05:
            continue  # missing: scores 0 over the gold, is left out over the predicted
        texts = [a for a in answers if a != NA] or ["nothing"]
        preds[key] = Prediction(
            key[0],
            key[1],
            _short_prediction(rng, list(answers), records),
            None,
            _elements_prediction(rng, raters, pool, raw, texts),
        )
    return gold, preds, records


def reference_scores(reference: ModuleType, example: GoldExample, pred: Prediction) -> dict[str, tuple]:
    assert example.raters is not None and example.short_answers is not None and pred.elements is not None
    texts = [[e.text for e in r.elements] for r in example.raters]
    return {
        "sqa_s": reference.sqa_s_metrics(pred.short_answer, example.short_answers),
        "sqa_uic": reference.sqa_uic_metrics([e.text for e in pred.elements], texts),
        "sqa_uic_bb": reference.sqa_uic_bb_metrics(
            ref_elements(pred.elements), [ref_elements(r.elements) for r in example.raters]
        ),
    }


def write_files(folder: Path, gold: dict[Key, GoldExample], preds: dict[Key, Prediction]) -> tuple[list[Path], Path]:
    """The examples as the release's two gold files and a prediction file."""

    def elements(items: tuple[Element, ...]) -> list[dict[str, Any]]:
        return [{"text": e.text, "bounds": list(e.bounds or ())} for e in items]

    aab = [
        {
            "image_id": g.image_id,
            "question": g.question,
            "ground_truth": [
                {"full_answer": r.full_answer, "ui_elements": elements(r.elements)} for r in g.raters or []
            ],
        }
        for g in gold.values()
    ]
    short = [{"image_id": g.image_id, "question": g.question, "ground_truth": g.short_answers} for g in gold.values()]
    predictions = [
        {
            "image_id": p.image_id,
            "question": p.question,
            "short_answer": p.short_answer,
            "ui_elements": elements(p.elements or ()),
        }
        for p in preds.values()
    ]
    paths = []
    for name, data in (("aab.json", aab), ("short.json", short), ("pred.json", predictions)):
        paths.append(folder / name)
        paths[-1].write_text(json.dumps(data))
    return paths[:2], paths[2]


def test_every_example_and_both_averages_equal_the_reference(shared_data, reference, tmp_path):
    # given thousands of real questions, with raters and predictions made from real answers and real screens
    gold, preds, records = real_examples(shared_data)
    assert len(gold) == len(records) == 8614
    # when the product scores them from files, as the score command does
    gold_paths, pred_path = write_files(tmp_path, gold, preds)
    report = scoring_run(gold_paths=gold_paths, prediction_path=pred_path, per_example=True)
    # then every per-example figure is the reference's
    sums = {task: [0.0] * len(names) for task, names in TASKS.items()}
    mismatches = []
    partial = dict.fromkeys(TASKS, 0)
    for row in report.examples:
        key = (row["image_id"], row["question"])
        if key not in preds:
            assert set(row["missing"]) == {"sqa_s", "sqa_uic", "sqa_uic_bb", "answer_matching"}
            continue
        expected = reference_scores(reference, gold[key], preds[key])
        for task, names in TASKS.items():
            ours = [row[task][name] for name in names]
            theirs = [float(v) for v in expected[task]]
            if any(abs(a - b) > TOLERANCE for a, b in zip(ours, theirs, strict=True)):
                mismatches.append((key, task, ours, theirs))
            sums[task] = [s + v for s, v in zip(sums[task], theirs, strict=True)]
            partial[task] += any(0 < v < 1 for v in theirs)
    assert mismatches == []
    # and both averages are the reference's figures averaged over the gold (missing = 0) and over the predicted
    n_gold, n_predicted = len(gold), len(preds)
    assert 0 < n_gold - n_predicted < n_gold * 0.1
    for task, names in TASKS.items():
        summary = report.summary[task]
        assert (summary["n_gold"], summary["n_predicted"], summary["missing"]) == (
            n_gold,
            n_predicted,
            n_gold - n_predicted,
        )
        for name, total in zip(names, sums[task], strict=True):
            assert summary["over_gold"][name] == pytest.approx(total / n_gold, abs=1e-12)
            assert summary["over_predicted"][name] == pytest.approx(total / n_predicted, abs=1e-12)
        # the data is not trivial: hundreds of examples score strictly between 0 and 1
        assert partial[task] > 300, (task, partial[task])
