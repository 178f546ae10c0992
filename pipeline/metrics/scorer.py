"""Scoring a prediction file against gold files: loading, validation, the join and the averages.

Gold: ScreenQA release files (``answers_and_bboxes`` and/or ``short_answers``, any number, merged on
``(image_id, question)``), or one DocVQA-format file (``{"data": [{"questionId", "answers"}]}``).
Predictions: a JSON list of ``{"image_id", "question", "short_answer"?, "full_answer"?,
"ui_elements"?: [{"text", "bounds"?}]}`` (or ``{"questionId", "answer"}`` for DocVQA gold).

Which task scores which field (a task is reported when at least one prediction carries its field and
the gold has what it needs):

| task | prediction field | gold needed |
| --- | --- | --- |
| ``sqa_s`` | ``short_answer`` | short_answers file |
| ``sqa_uic`` | ``ui_elements`` (texts) | answers_and_bboxes file |
| ``sqa_uic_bb`` | ``ui_elements``, every one with ``bounds`` | answers_and_bboxes file |
| ``sqa_l`` | ``full_answer`` | answers_and_bboxes file |
| ``answer_matching`` | ``ui_elements`` (texts) | answers_and_bboxes file |

Per-example figures are the release's (``pipeline.metrics.squad`` / ``uic``). Two averages per task,
each named for what it divides by: ``over_gold`` averages over every gold example of the task, a
gold example with no prediction for it (*missing*) scoring 0, so a file cannot raise its average by
leaving out hard questions; ``over_predicted`` averages over the examples that have a prediction only.
``n_gold`` = ``n_predicted`` + ``missing``. A prediction whose ``(image_id, question)`` is not in the
gold is *unmatched*: counted, never scored. Malformed input raises ``ScoringInputError`` with the
file, the item index and what is wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.exceptions import ApplicationError
from pipeline.metrics.anls import anls_score
from pipeline.metrics.matching import answer_matching_best
from pipeline.metrics.rouge import rouge_scores
from pipeline.metrics.squad import squad_scores
from pipeline.metrics.uic import Element, uic_bb_scores, uic_scores

Key = tuple[int, str]

TASK_METRICS: dict[str, tuple[str, ...]] = {
    "sqa_s": ("em", "f1"),
    "sqa_uic": ("em", "f1"),
    "sqa_uic_bb": ("bbox_f1", "em", "f1"),
    "sqa_l": ("rouge1", "rouge2", "rougeL"),
    "answer_matching": ("ndcg_v", "f1"),
    "anls": ("anls",),
}


class ScoringInputError(ApplicationError):
    """A gold or prediction file cannot be scored; the message names the file, item and problem."""


@dataclass(frozen=True)
class Rater:
    full_answer: str
    elements: tuple[Element, ...]


@dataclass
class GoldExample:
    image_id: int
    question: str
    short_answers: list[str] | None = None
    raters: list[Rater] | None = None


@dataclass(frozen=True)
class Prediction:
    image_id: int
    question: str
    short_answer: str | None
    full_answer: str | None
    elements: tuple[Element, ...] | None

    @property
    def has_boxes(self) -> bool:
        return self.elements is not None and all(e.bounds is not None for e in self.elements)


@dataclass
class ScoreReport:
    summary: dict[str, Any]
    examples: list[dict[str, Any]] = field(default_factory=list)


# --- reading and validating -------------------------------------------------------------------


def _read_json(path: Path | str, role: str) -> Any:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ScoringInputError(f"{role} file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ScoringInputError(f"{role} file {path} cannot be read: {exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoringInputError(f"{role} file {path} is not valid JSON: {exc}") from exc


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bounds(value: Any, where: str) -> tuple[float, float, float, float]:
    if (
        not isinstance(value, list)
        or len(value) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        raise ScoringInputError(f"{where}: bounds must be a list of 4 numbers [left, top, right, bottom]")
    # Python's JSON reader accepts NaN and Infinity; no IoU can be computed from them.
    if not all(math.isfinite(v) for v in value):
        raise ScoringInputError(f"{where}: bounds must be finite numbers")
    # The numbers are kept as read (int or float): the IoU is then computed from the same values,
    # with the same arithmetic, as the release's code would use.
    left, top, right, bottom = value
    return left, top, right, bottom


def _elements(value: Any, where: str, *, bounds_required: bool) -> tuple[Element, ...]:
    if not isinstance(value, list):
        raise ScoringInputError(f"{where}: ui_elements must be a list")
    out = []
    for j, item in enumerate(value):
        here = f"{where}, ui_elements[{j}]"
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise ScoringInputError(f"{here}: must be an object with a string 'text'")
        if "bounds" in item and item["bounds"] is not None:
            out.append(Element(item["text"], _bounds(item["bounds"], here)))
        elif bounds_required:
            raise ScoringInputError(f"{here}: 'bounds' is missing")
        else:
            out.append(Element(item["text"]))
    return tuple(out)


def _key(item: Any, where: str) -> Key:
    if not isinstance(item, dict):
        raise ScoringInputError(f"{where}: must be an object")
    if not _is_int(item.get("image_id")):
        raise ScoringInputError(f"{where}: 'image_id' must be an integer")
    if not isinstance(item.get("question"), str):
        raise ScoringInputError(f"{where}: 'question' must be a string")
    return item["image_id"], item["question"]


def _file_kind(data: list[Any]) -> str | None:
    """``"short"`` or ``"raters"`` when every non-empty ``ground_truth`` of the file is of that kind, else None."""
    kinds = {
        "short" if all(isinstance(g, str) for g in item["ground_truth"]) else "raters"
        for item in data
        if isinstance(item, dict) and isinstance(item.get("ground_truth"), list) and item["ground_truth"]
    }
    return kinds.pop() if len(kinds) == 1 else None


def _load_screenqa_gold(data: list[Any], path: Path, gold: dict[Key, GoldExample]) -> None:
    seen: set[Key] = set()
    # An empty ground_truth has no kind of its own: it takes the file's (a short-answer file or a file
    # of raters) and is then scored as the release's code scores it, 0 on every figure.
    file_kind = _file_kind(data)
    for i, item in enumerate(data):
        where = f"gold file {path}, item {i}"
        key = _key(item, where)
        if key in seen:
            raise ScoringInputError(f"{where}: duplicate (image_id, question) {key!r} in one file")
        seen.add(key)
        ground_truth = item.get("ground_truth")
        if not isinstance(ground_truth, list):
            raise ScoringInputError(f"{where}: 'ground_truth' must be a list")
        example = gold.setdefault(key, GoldExample(image_id=key[0], question=key[1]))
        if all(isinstance(g, str) for g in ground_truth) and (ground_truth or file_kind == "short"):
            if example.short_answers is not None:
                raise ScoringInputError(f"{where}: {key!r} has short answers in two gold files")
            example.short_answers = list(ground_truth)
        elif all(isinstance(g, dict) for g in ground_truth) and (ground_truth or file_kind == "raters"):
            if example.raters is not None:
                raise ScoringInputError(f"{where}: {key!r} has rater answers in two gold files")
            raters = []
            for j, rater in enumerate(ground_truth):
                here = f"{where}, ground_truth[{j}]"
                if not isinstance(rater.get("full_answer", ""), str):
                    raise ScoringInputError(f"{here}: 'full_answer' must be a string")
                elements = _elements(rater.get("ui_elements", []), here, bounds_required=False)
                raters.append(Rater(rater.get("full_answer", ""), elements))
            example.raters = raters
        elif ground_truth:
            raise ScoringInputError(f"{where}: 'ground_truth' must hold only strings or only objects")
        # else: empty, in a file of no single kind: nothing says which task it belongs to; not scored


def load_gold(paths: Sequence[Path | str]) -> tuple[str, Any]:
    """``("screenqa", {key: GoldExample})`` or ``("docvqa", {questionId: [answers]})``."""
    if not paths:
        raise ScoringInputError("at least one gold file is needed")
    screenqa: dict[Key, GoldExample] = {}
    docvqa: dict[Any, list[str]] | None = None
    for raw_path in paths:
        path = Path(raw_path)
        data = _read_json(path, "gold")
        if isinstance(data, dict) and "data" in data:
            if docvqa is not None or screenqa or len(paths) > 1:
                raise ScoringInputError("a DocVQA gold file must be the only --gold file")
            docvqa = _load_docvqa_gold(data["data"], path)
        elif isinstance(data, list):
            _load_screenqa_gold(data, path, screenqa)
        else:
            raise ScoringInputError(
                f"gold file {path}: expected a JSON list (ScreenQA release) or an object with 'data' (DocVQA)"
            )
    if docvqa is not None:
        return "docvqa", docvqa
    return "screenqa", screenqa


def _load_docvqa_gold(data: Any, path: Path) -> dict[Any, list[str]]:
    if not isinstance(data, list):
        raise ScoringInputError(f"gold file {path}: 'data' must be a list")
    gold: dict[Any, list[str]] = {}
    for i, item in enumerate(data):
        where = f"gold file {path}, data[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("questionId"), int | str):
            raise ScoringInputError(f"{where}: must be an object with a 'questionId'")
        answers = item.get("answers")
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise ScoringInputError(f"{where}: 'answers' must be a list of strings")
        if item["questionId"] in gold:
            raise ScoringInputError(f"{where}: duplicate questionId {item['questionId']!r}")
        gold[item["questionId"]] = answers
    return gold


def load_predictions(path: Path | str) -> dict[Key, Prediction]:
    """The ScreenQA predictions of ``path`` by key; ``ScoringInputError`` on any malformed item."""
    data = _read_json(path, "prediction")
    if not isinstance(data, list):
        raise ScoringInputError(f"prediction file {path}: expected a JSON list of objects")
    out: dict[Key, Prediction] = {}
    for i, item in enumerate(data):
        where = f"prediction file {path}, item {i}"
        key = _key(item, where)
        if key in out:
            raise ScoringInputError(f"{where}: second prediction for {key!r}")
        for name in ("short_answer", "full_answer"):
            if name in item and item[name] is not None and not isinstance(item[name], str):
                raise ScoringInputError(f"{where}: '{name}' must be a string")
        elements = None
        if item.get("ui_elements") is not None:
            elements = _elements(item["ui_elements"], where, bounds_required=False)
        out[key] = Prediction(key[0], key[1], item.get("short_answer"), item.get("full_answer"), elements)
    return out


def _load_docvqa_predictions(path: Path | str) -> dict[Any, str]:
    data = _read_json(path, "prediction")
    if not isinstance(data, list):
        raise ScoringInputError(f"prediction file {path}: expected a JSON list of objects")
    out: dict[Any, str] = {}
    for i, item in enumerate(data):
        where = f"prediction file {path}, item {i}"
        if not isinstance(item, dict) or not isinstance(item.get("questionId"), int | str):
            raise ScoringInputError(f"{where}: must be an object with a 'questionId'")
        if not isinstance(item.get("answer"), str):
            raise ScoringInputError(f"{where}: 'answer' must be a string")
        if item["questionId"] in out:
            raise ScoringInputError(f"{where}: second prediction for questionId {item['questionId']!r}")
        out[item["questionId"]] = item["answer"]
    return out


# --- scoring ----------------------------------------------------------------------------------


class _Totals:
    """Per task: the sums of the scored examples' figures, how many were scored, how many were missing."""

    def __init__(self) -> None:
        self.sums: dict[str, dict[str, float]] = {}
        self.scored: dict[str, int] = {}
        self.missing: dict[str, int] = {}

    def add(self, task: str, scores: dict[str, float] | None) -> None:
        sums = self.sums.setdefault(task, dict.fromkeys(TASK_METRICS[task], 0.0))
        if scores is None:
            self.missing[task] = self.missing.get(task, 0) + 1
            return
        self.scored[task] = self.scored.get(task, 0) + 1
        for name, value in scores.items():
            sums[name] += value

    def summary(self) -> dict[str, Any]:
        """Both means of every task, named for what they divide by (docs/scoring.md, "Two averages")."""
        out: dict[str, Any] = {}
        for task, sums in self.sums.items():
            scored = self.scored.get(task, 0)
            missing = self.missing.get(task, 0)
            n_gold = scored + missing
            out[task] = {
                # every gold example of the task, a missing prediction scoring 0 (the official figure
                # when the file predicts every example)
                "over_gold": {name: value / n_gold for name, value in sums.items()},
                # only the examples that have a prediction (None when there is none)
                "over_predicted": {name: (value / scored if scored else None) for name, value in sums.items()},
                "n_gold": n_gold,
                "n_predicted": scored,
                "missing": missing,
            }
        return out


def _example_scores(example: GoldExample, pred: Prediction | None, tasks: set[str]) -> Iterator[tuple[str, Any]]:
    """``(task, scores or None when missing)`` for every reported task this gold example takes part in."""
    if "sqa_s" in tasks and example.short_answers is not None:
        if pred is None or pred.short_answer is None:
            yield "sqa_s", None
        else:
            em, f1 = squad_scores(pred.short_answer, example.short_answers)
            yield "sqa_s", {"em": em, "f1": f1}
    raters = example.raters
    if raters is None:
        return
    elements = pred.elements if pred is not None else None
    rater_texts = [[e.text for e in r.elements] for r in raters]
    if "sqa_uic" in tasks or "answer_matching" in tasks:
        texts = [e.text for e in elements] if elements is not None else None
        if "sqa_uic" in tasks:
            if texts is None:
                yield "sqa_uic", None
            else:
                em, f1 = uic_scores(texts, rater_texts)
                yield "sqa_uic", {"em": em, "f1": f1}
        if "answer_matching" in tasks:
            if texts is None:
                yield "answer_matching", None
            else:
                ndcg, f1 = answer_matching_best(texts, rater_texts)
                yield "answer_matching", {"ndcg_v": ndcg, "f1": f1}
    if "sqa_uic_bb" in tasks:
        if pred is None or elements is None or not pred.has_boxes:
            yield "sqa_uic_bb", None
        else:
            boxed = [r.elements for r in raters if all(e.bounds is not None for e in r.elements)]
            box_f1, em, f1 = uic_bb_scores(elements, boxed)
            yield "sqa_uic_bb", {"bbox_f1": box_f1, "em": em, "f1": f1}
    if "sqa_l" in tasks:
        if pred is None or pred.full_answer is None:
            yield "sqa_l", None
        else:
            yield "sqa_l", rouge_scores(pred.full_answer, [r.full_answer for r in raters])


def _reported_tasks(gold: dict[Key, GoldExample], preds: dict[Key, Prediction]) -> set[str]:
    has_short = any(g.short_answers is not None for g in gold.values())
    has_raters = any(g.raters is not None for g in gold.values())
    tasks: set[str] = set()
    for pred in preds.values():
        if has_short and pred.short_answer is not None:
            tasks.add("sqa_s")
        if has_raters and pred.elements is not None:
            tasks |= {"sqa_uic", "answer_matching"}
            if pred.has_boxes:
                tasks.add("sqa_uic_bb")
        if has_raters and pred.full_answer is not None:
            tasks.add("sqa_l")
    return tasks


def score_screenqa(
    gold: dict[Key, GoldExample],
    preds: dict[Key, Prediction],
    *,
    per_example: bool = False,
    only: Collection[str] | None = None,
) -> ScoreReport:
    """Score every reported task; both averages (over the gold, missing = 0; over the predicted) per task.

    ``only`` restricts the tasks (the benchmark times one task at a time).
    """
    tasks = _reported_tasks(gold, preds)
    if only is not None:
        tasks &= set(only)
    totals = _Totals()
    examples: list[dict[str, Any]] = []
    for key, example in gold.items():
        pred = preds.get(key)
        row: dict[str, Any] = {"image_id": key[0], "question": key[1]} if per_example else {}
        missing: list[str] = []
        for task, scores in _example_scores(example, pred, tasks):
            totals.add(task, scores)
            if per_example:
                if scores is None:
                    missing.append(task)
                else:
                    row[task] = scores
        if per_example:
            if missing:
                row["missing"] = missing
            examples.append(row)
    unmatched = [key for key in preds if key not in gold]
    if per_example:
        examples += [{"image_id": k[0], "question": k[1], "unmatched": True} for k in unmatched]
    summary = totals.summary() | {"gold_examples": len(gold), "unmatched": len(unmatched)}
    return ScoreReport(summary=summary, examples=examples)


def score_docvqa(gold: dict[Any, list[str]], preds: dict[Any, str], *, per_example: bool = False) -> ScoreReport:
    """ANLS over the DocVQA gold questions (missing = 0, unmatched counted)."""
    totals = _Totals()
    examples: list[dict[str, Any]] = []
    for question_id, answers in gold.items():
        answer = preds.get(question_id)
        scores = None if answer is None else {"anls": anls_score(answer, answers)}
        totals.add("anls", scores)
        if per_example:
            row: dict[str, Any] = {"questionId": question_id}
            row |= {"missing": ["anls"]} if scores is None else {"anls": scores}
            examples.append(row)
    unmatched = [q for q in preds if q not in gold]
    if per_example:
        examples += [{"questionId": q, "unmatched": True} for q in unmatched]
    summary = totals.summary() | {"gold_examples": len(gold), "unmatched": len(unmatched)}
    return ScoreReport(summary=summary, examples=examples)


def scoring_run(
    *, gold_paths: Sequence[Path | str], prediction_path: Path | str, per_example: bool = False
) -> ScoreReport:
    """Load, validate, join and score; the one entry point of the ``score`` command.

    Pure (reads files, writes nothing); raises ``ScoringInputError`` before scoring anything if an
    input is malformed.
    """
    kind, gold = load_gold(gold_paths)
    if kind == "docvqa":
        return score_docvqa(gold, _load_docvqa_predictions(prediction_path), per_example=per_example)
    return score_screenqa(gold, load_predictions(prediction_path), per_example=per_example)
