"""Differential property tests: every per-example figure of SQA-S, SQA-UIC and SQA-UIC-BB equals the
release's own code (../shared/reference/screen_qa/metrics.py) within 1e-12, on generated input.

The generators aim at the corners where the two used to differ: texts that normalise to nothing,
no-answer spellings, duplicated items, empty lists, and boxes on a small grid (so overlaps, ties in
the assignment, inverted and zero-area boxes are common). Skipped, with a message, without the
reference. The same comparison on real data is in test_reference_realdata.py.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipeline.metrics.squad import squad_scores
from pipeline.metrics.uic import Element, iou, uic_bb_scores, uic_scores
from tests.pipeline.metrics.reference import close, ref_elements

PROPERTY = settings(
    max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# --- SQA-S ------------------------------------------------------------------------------------------

SHORT_PIECES = [
    "<no answer>", "<<<no answer>>>", "<No Answer>", " <no answer>", "<no answer> ", "no answer",
    "$", "The", "the +", "a", "An", "", " ", "\t", "...", "C Max", "2014", "c max", "C-Max", "$3.00",
    "3", "off", "On", "the on", "Straße", "STRASSE", "ﬁle", "‘quoted’", "“x”", "128-bit", "128 bit",
]  # fmt: skip
short_text = st.one_of(
    st.sampled_from(SHORT_PIECES),
    st.lists(st.sampled_from(SHORT_PIECES), min_size=1, max_size=4).map(" ".join),
    st.text(alphabet=st.sampled_from("aAtheT .,$-<>n\u00a0é3"), max_size=10),
    st.text(max_size=8),
)


@PROPERTY
@given(prediction=short_text, ground_truths=st.lists(short_text, max_size=5))
@example(prediction="$", ground_truths=["The"])  # both normalise to nothing: EM 1, F1 0
@example(prediction="<<<no answer>>>", ground_truths=["<no answer>"])
@example(prediction="<No Answer>", ground_truths=["<no answer>", "x"])
@example(prediction=" <no answer> ", ground_truths=["<no answer>"])
@example(prediction="", ground_truths=[])
def test_sqa_s_equals_the_reference(reference, prediction, ground_truths):
    assert close(squad_scores(prediction, ground_truths), reference.sqa_s_metrics(prediction, ground_truths))


# --- SQA-UIC ----------------------------------------------------------------------------------------

item = st.sampled_from(["C Max", "2014", "c max", "C Max ", "", "on", "off", "★★", "★★★"])
item_list = st.lists(item, max_size=5)


@PROPERTY
@given(prediction=item_list, raters=st.lists(item_list, max_size=4))
@example(prediction=["C Max"], raters=[["C Max", "2014"], ["C Max"]])
@example(prediction=[], raters=[[], ["x"]])
@example(prediction=["x"], raters=[[]])
def test_sqa_uic_equals_the_reference(reference, prediction, raters):
    assert close(uic_scores(prediction, raters), reference.sqa_uic_metrics(prediction, raters))


# --- SQA-UIC-BB -------------------------------------------------------------------------------------

# A small grid: many overlaps, exact ties, zero-area and inverted boxes. Floats too (no subnormals:
# the release's code divides by the union, which a subnormal area can round to zero).
coordinate = st.one_of(
    st.integers(0, 12),
    st.floats(-4, 16, allow_nan=False, allow_infinity=False, allow_subnormal=False),
    st.integers(-(10**6), 10**6),
)
box = st.tuples(coordinate, coordinate, coordinate, coordinate)
element = st.builds(Element, text=st.sampled_from(["a", "b", "a ", ""]), bounds=box)
element_list = st.lists(element, max_size=5)


def grid(*boxes_and_texts):
    return [Element(text, tuple(b)) for text, b in boxes_and_texts]


@PROPERTY
@given(prediction=element_list, raters=st.lists(element_list, max_size=3))
# Maximum total IoU (p0-r0 alone, IoU 1) beats two pairs (1/9 + 0.2): the release counts 1 match.
@example(
    prediction=grid(("a", (0, 0, 100, 10)), ("c", (0, 0, 20, 10))),
    raters=[grid(("a", (0, 0, 100, 10)), ("b", (80, 0, 180, 10)))],
)
# An exact tie between a two-pair and a one-pair assignment (1/2 + 1/6 = 2/3).
@example(
    prediction=grid(("a", (4, 0, 7, 1)), ("a", (0, 0, 5, 1))),
    raters=[grid(("a", (5, 0, 8, 1)), ("a", (4, 0, 6, 1)))],
)
@example(prediction=grid(("a", (10, 10, 0, 0))), raters=[grid(("a", (10, 10, 0, 0)))])  # inverted
@example(prediction=grid(("a", (0, 0, 0, 10))), raters=[grid(("a", (0, 0, 0, 10)))])  # zero width
@example(prediction=[], raters=[[], grid(("a", (0, 0, 1, 1)))])
def test_sqa_uic_bb_equals_the_reference(reference, prediction, raters):
    ours = uic_bb_scores(prediction, raters)
    theirs = reference.sqa_uic_bb_metrics(ref_elements(prediction), [ref_elements(r) for r in raters])
    assert close(ours, theirs)


@PROPERTY
@given(a=box, b=box)
def test_iou_is_the_references_float(reference, a, b):
    # the same float, not only a close one: the assignment's tie-breaking depends on it
    (top_a, left_a, bottom_a, right_a), (top_b, left_b, bottom_b, right_b) = (
        (a[1], a[0], a[3], a[2]),
        (b[1], b[0], b[3], b[2]),
    )
    assert iou(a, b) == reference.iou((top_a, left_a, bottom_a, right_a), (top_b, left_b, bottom_b, right_b))


def test_the_reference_is_the_one_the_docs_name(reference):
    # the file is the release's code/metrics.py (google-research-datasets/screen_qa @ 1dfdbcc)
    assert reference.NO_ANSWER == "<no answer>"
    assert {"sqa_s_metrics", "sqa_uic_metrics", "sqa_uic_bb_metrics"} <= set(vars(reference))


@pytest.mark.parametrize(
    ("prediction", "ground_truths", "expected"),
    [
        ("$", ["The"], (1.0, 0.0)),
        ("the +", ["$"], (1.0, 0.0)),
        ("<<<no answer>>>", ["<no answer>"], (0.0, 0.0)),
        ("<No Answer>", ["<no answer>", "no answer"], (1.0, 1.0)),  # text "no answer" vs the answer "no answer"
        (" <no answer>", ["<no answer>"], (0.0, 0.0)),
        ("<no answer>", [" <no answer> "], (0.0, 0.0)),
    ],
)
def test_the_corners_issue_11_names(reference, prediction, ground_truths, expected):
    assert squad_scores(prediction, ground_truths) == expected
    assert close(expected, reference.sqa_s_metrics(prediction, ground_truths))
