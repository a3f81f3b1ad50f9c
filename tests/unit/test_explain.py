"""``musetui scan --explain``: its sections, in order, and the scoring's own numbers in them."""

from __future__ import annotations

import re

from musetui.core.fingerprints import attribution, host
from musetui.core.fingerprints.explain import SECTIONS, Numbers, explain_text


def _numbers(**changed: float) -> Numbers:
    base: dict[str, float] = {
        "quoted_factor": 0.25,
        "host_agreement": 0.5,
        "tol_after_s": 5.0,
        "tol_after_created_s": 600.0,
        "tol_before_s": 600.0,
    }
    base.update(changed)
    return Numbers({"strong": 1.0, "medium": 0.6, "weak": 0.2}, **base)


def test_the_sections_are_the_numbered_parts_in_order_a_blank_line_apart() -> None:
    texts = [s if isinstance(s, str) else s(_numbers()) for s in SECTIONS]
    assert all(t and not t.startswith("\n") and not t.endswith("\n") for t in texts)
    numbered = [m.group(1) for t in texts if (m := re.match(r"(\d+a?)\. ", t))]
    assert numbered == ["0", "1", "2", "3", "4", "5", "5a", "6", "7", "8", "9"]
    assert "\n\n".join(texts) + "\n" == attribution.EXPLAIN
    assert attribution.EXPLAIN.startswith("musetui attribution: how a verdict is scored\n====")


def test_the_numbers_shown_are_the_scorings_own() -> None:
    text = attribution.EXPLAIN
    weights = attribution.STRENGTH_WEIGHT
    assert f"strong = {weights['strong']}, medium = {weights['medium']}, weak = {weights['weak']}." in text
    assert f"(weight x {attribution.QUOTED_FACTOR}, the" in text
    assert f"(1 - {host.HOST_AGREEMENT} * host confidence)" in text
    assert f"minted more than {attribution.TOL_AFTER_S:.0f} s AFTER" in text
    assert f"up to {attribution.TOL_AFTER_CREATED_S:.0f} s after it" in text
    assert f"than {attribution.TOL_BEFORE_S:.0f} s BEFORE its line" in text


def test_other_numbers_change_only_the_sentences_that_name_them() -> None:
    def text(tol_before_s: float) -> str:
        return explain_text(
            strength_weight={"strong": 1.0, "medium": 0.6, "weak": 0.2},
            quoted_factor=0.25,
            host_agreement=0.5,
            tol_after_s=5.0,
            tol_after_created_s=600.0,
            tol_before_s=tol_before_s,
        )

    plain, other = text(600.0), text(123.0)
    changed = [(a, b) for a, b in zip(plain.splitlines(), other.splitlines(), strict=True) if a != b]
    assert [b for _a, b in changed] == [
        "   than 123 s BEFORE its line (first",
        "   Recorded line times that run backwards (a line recorded more than 123 s",
    ]
