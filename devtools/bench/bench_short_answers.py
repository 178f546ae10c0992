"""Short answers (stage 6): how much of the real release the rule-based generator reproduces.

The proxy (defined in docs/short_answers.md, "Measuring against the release"): for every real
question of ``short_answers/{validation,test}.json`` whose first listed answer is not
``<no answer>``, that first answer is the single element text, the full answer is templated
("The answer is <it>."), and the rules run. Scored:

- **recall**: the question's *other* real answers, as distinct SQuAD-normalised forms, leaving out
  ``<no answer>``, the forms that normalise to nothing, and the forms equal to the normalised input
  (those an echo of the input would already match), found among the normalised outputs;
- **verbatim recall**: the other real answers as distinct strings (not ``<no answer>``, not the
  input string itself) found exactly in the output;
- **issue-11 recall**: the figure the issue quoted (every other string, normalised, the ones an
  echo matches included), kept for comparison with the "before" numbers;
- **primary outside the list**: the share of questions whose first output (the primary) does not
  normalise to any real answer of the question;
- variants per question (mean and max), the share of generated answers that are real ones, the
  misses by kind (a heuristic classifier, for diagnosis only) and the speed.

CI size: a seeded sample of 1,000 questions per split; ``--full``: every real question. The rules were
written while looking at validation only: test is the held-out split.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pipeline.metrics.squad import NO_ANSWER, normalize_answer
from pipeline.release.short_answers import short_answers_generate

SHORT_ANSWERS = Path(__file__).resolve().parents[3] / "shared" / "data" / "screen_qa" / "short_answers"
SPLITS = ("validation", "test")
SAMPLE = 1_000
SEED = 11
TARGET_RECALL = 0.60
TARGET_PRIMARY_OUTSIDE = 0.005

_MONTH = r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
_WEEKDAY = r"\b(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?\b"
_NUMBER_WORD = (
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
    r"|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred"
    r"|thousand|million|billion|first|second|third|fourth|fifth|half|point|none|no)\b"
)
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("phone", re.compile(r"(?:\+?\d[\d\s().-]{6,}\d)")),
    ("date", re.compile(rf"{_MONTH}|{_WEEKDAY}|\b\d{{1,4}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}\b|\b(?:19|20)\d\d\b", re.I)),
    (
        "time and duration",
        re.compile(
            r"\d:\d\d|\b[ap]\.?m\b|\b\d+\s*(?:h|hr|hrs|m|min|mins|s|sec|secs)\b|\b(?:second|minute|hour)s?\b",
            re.I,
        ),
    ),
    ("currency and percent", re.compile(r"[$€£¥₹%]|\b(?:dollars?|cents?|euros?|pounds?|percent|usd|eur|gbp)\b", re.I)),
)


def _tokens(text: str) -> set[str]:
    return set(normalize_answer(text).split())


def _is_list(text: str) -> bool:
    return text.count(",") >= 1 or bool(re.search(r"\b(?:and|or)\b", text))


def miss_kind(given: str, missed: str) -> str:
    """A rough kind for a real variant the rules did not produce (diagnosis only, first rule wins)."""
    both = f"{given} || {missed}"
    digits = re.compile(r"\d")
    for kind, pattern in _KINDS:
        if kind == "phone":
            if all(len(re.sub(r"\D", "", m)) >= 7 for m in (given, missed)) and pattern.search(given):
                return kind
            continue
        if pattern.search(both):
            return kind
    a, b = _tokens(given), _tokens(missed)
    if _is_list(given) and _is_list(missed) and a and b and len(a & b) >= 0.6 * max(len(a), len(b)):
        return "list rewording"
    if digits.search(both) or re.search(_NUMBER_WORD, both, re.I):
        if digits.search(given) and digits.search(missed) and (a <= b or b <= a):
            return "optional units"
        return "number formats"
    if a < b:
        return "words added"
    if b < a:
        return "words dropped"
    return "paraphrase"


def _records(split: str) -> list[dict[str, Any]]:
    data = json.loads((SHORT_ANSWERS / f"{split}.json").read_text())
    assert isinstance(data, list)
    return data


def score(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The proxy figures for these release records (see the module docstring)."""
    questions = answerable = not_answerable_ok = 0
    scored = matched = 0
    verbatim_total = verbatim_matched = 0
    issue_total = issue_matched = 0
    primary_outside = 0
    all_covered = with_variants = 0
    n_answers = max_answers = 0
    generated_real = 0
    kinds: Counter[str] = Counter()
    outside_examples: list[list[str]] = []
    started = time.perf_counter()
    for record in records:
        questions += 1
        question: str = record["question"]
        truths: list[str] = record["ground_truth"]
        given = truths[0]
        if given == NO_ANSWER:
            out = short_answers_generate(
                question=question, elements=[], full_answer="", not_answerable=True, backend="rules"
            )
            not_answerable_ok += out.answers == [NO_ANSWER]
            continue
        answerable += 1
        answers = short_answers_generate(
            question=question, elements=[given], full_answer=f"The answer is {given}.", backend="rules"
        ).answers
        produced = {normalize_answer(a) for a in answers}
        real_forms = {normalize_answer(t) for t in truths if t != NO_ANSWER}
        n_answers += len(answers)
        max_answers = max(max_answers, len(answers))
        generated_real += sum(normalize_answer(a) in real_forms for a in answers)
        if normalize_answer(answers[0]) not in real_forms:
            primary_outside += 1
            if len(outside_examples) < 20:
                outside_examples.append([question, given, answers[0]])
        others = [t for t in truths[1:] if t != NO_ANSWER]
        for other in others:
            issue_total += 1
            issue_matched += normalize_answer(other) in produced
        given_form = normalize_answer(given)
        forms = {normalize_answer(o): o for o in reversed(others)}  # the first string of each form
        forms = {f: o for f, o in forms.items() if f and f != given_form}
        hits = [f in produced for f in forms]
        scored += len(hits)
        matched += sum(hits)
        if hits:
            with_variants += 1
            all_covered += all(hits)
        for form, hit in zip(forms, hits, strict=True):
            if not hit:
                kinds[miss_kind(given, forms[form])] += 1
        strings = {o for o in others if o != given}
        verbatim_total += len(strings)
        verbatim_matched += sum(s in answers for s in strings)
    elapsed = time.perf_counter() - started
    missed = scored - matched
    return {
        "questions": questions,
        "answerable": answerable,
        "not_answerable_ok": not_answerable_ok,
        "variants_scored": scored,
        "recall": round(matched / scored, 4) if scored else None,
        "verbatim_recall": round(verbatim_matched / verbatim_total, 4) if verbatim_total else None,
        "issue11_recall": round(issue_matched / issue_total, 4) if issue_total else None,
        "questions_all_variants_covered": round(all_covered / with_variants, 4) if with_variants else None,
        "primary_outside_list": round(primary_outside / answerable, 4) if answerable else None,
        "primary_outside_count": primary_outside,
        "primary_outside_examples": outside_examples,
        "answers_per_question_mean": round(n_answers / answerable, 2) if answerable else None,
        "answers_per_question_max": max_answers,
        "generated_in_release_share": round(generated_real / n_answers, 4) if n_answers else None,
        "misses_by_kind": {k: round(v / missed, 3) for k, v in kinds.most_common()} if missed else {},
        "questions_per_s": round(questions / elapsed) if elapsed > 0 else None,
    }


def run(full: bool) -> dict:
    if not SHORT_ANSWERS.is_dir():
        return {"skipped": f"real short answers not found at {SHORT_ANSWERS}"}
    figures: dict[str, Any] = {"sample": "every question" if full else f"{SAMPLE} questions per split, seed {SEED}"}
    for split in SPLITS:
        records = _records(split)
        if not full:
            records = random.Random(SEED).sample(records, min(SAMPLE, len(records)))
        figures[split] = score(records)
    figures["targets"] = {"recall": TARGET_RECALL, "primary_outside_list": TARGET_PRIMARY_OUTSIDE}
    figures["targets_met"] = all(
        figures[s]["recall"] is not None
        and figures[s]["recall"] >= TARGET_RECALL
        and figures[s]["primary_outside_list"] < TARGET_PRIMARY_OUTSIDE
        for s in SPLITS
    )
    return figures
