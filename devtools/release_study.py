"""What the public ScreenQA release shows about agreement (docs/postprocessing.md, "Evidence").

    python -m devtools.release_study [--data ../shared/data]

Reads the release's short-answer files (validation and test; ../shared/data/screen_qa, never copied
into the repository) and prints, as JSON: how many acceptable answers the questions list, how often
``<no answer>`` is listed alone or beside text answers, and the questions whose list-shaped answers
are nested (one list inside another) or share an item while each has its own (a heuristic: answers
split on commas, "and", "or", "&"; it also catches dates and places written two ways, so the
examples are what to read, not the counts).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

NO_ANSWER = "<no answer>"
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
_LIST_SEPARATORS = re.compile(r"\s*(?:,|;|&|\band\b|\bor\b)\s*")


def _items(answer: str) -> frozenset[str]:
    return frozenset(i for i in (x.strip(" \"'.").casefold() for x in _LIST_SEPARATORS.split(answer)) if i)


def _list_relations(answers: list[str]) -> tuple[bool, bool]:
    """(nested, partial): some two list-shaped answers, one inside the other / sharing an item, each with its own."""
    lists = [_items(a) for a in answers if a != NO_ANSWER]
    if not any(len(items) >= 2 for items in lists):
        return False, False
    nested = partial = False
    for i, a in enumerate(lists):
        for b in lists[i + 1 :]:
            if a != b and (a < b or b < a):
                nested = True
            elif a & b and a - b and b - a:
                partial = True
    return nested, partial


def release_study(data: Path) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for split in ("validation", "test"):
        records = json.loads((data / "screen_qa" / "short_answers" / f"{split}.json").read_text(encoding="utf-8"))
        rows += [{**r, "split": split} for r in records]
    n = len(rows)
    sizes = Counter(len(r["ground_truth"]) for r in rows)
    only = [r for r in rows if r["ground_truth"] == [NO_ANSWER]]
    mixed = [r for r in rows if NO_ANSWER in r["ground_truth"] and len(r["ground_truth"]) > 1]
    relations = [(r, *_list_relations(r["ground_truth"])) for r in rows]
    return {
        "questions": n,
        "by_split": dict(Counter(r["split"] for r in rows)),
        "answers_per_question": {str(k): sizes[k] for k in sorted(sizes)},
        "answers_per_question_mean": round(sum(k * v for k, v in sizes.items()) / n, 3),
        "no_answer_only": {"count": len(only), "share": round(len(only) / n, 4)},
        "no_answer_beside_text": {
            "count": len(mixed),
            "share": round(len(mixed) / n, 4),
            "by_split": dict(Counter(r["split"] for r in mixed)),
        },
        "list_answers_nested": sum(nested for _, nested, _ in relations),
        "list_answers_partial_overlap": sum(partial for _, _, partial in relations),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="What the public ScreenQA release shows about agreement.")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    args = parser.parse_args(argv)
    print(json.dumps(release_study(args.data), indent=2))


if __name__ == "__main__":
    main()
