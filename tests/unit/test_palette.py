"""Provider colours: one table for the app and the report, and the report's apart under colour blindness."""

from __future__ import annotations

import itertools
from pathlib import Path

from coloraide import Color

from musetui.core import evidence_report as er
from musetui.core import report_html, report_page
from musetui.core.model import PROVIDERS
from musetui.core.palette import PAGE_COLOURS, SCREEN_COLOURS

#: The least CIEDE2000 difference between two providers' report colours, as a viewer sees them.
MIN_DELTA_E = 6.0


def _closest(colours: dict[str, str], deficiency: str | None) -> tuple[float, str, str]:
    """The smallest ΔE2000 between two colours, after a Machado (2009) simulation of ``deficiency``."""

    def seen(hex_colour: str) -> Color:
        c = Color(hex_colour)
        return c.filter(deficiency, method="machado") if deficiency else c

    return min(
        (seen(x).delta_e(seen(y), method="2000"), a, b) for (a, x), (b, y) in itertools.combinations(colours.items(), 2)
    )


def _report_colours(sample_dir: Path) -> dict[str, str]:
    """Each provider's colour as the rendered report paints it (its swatches and bars)."""
    data = er.collect([str(sample_dir)], use_cache=False)
    html = report_page.render_html(data)
    shown = {p: report_html.colour(p) for p in PROVIDERS}
    for p in {s.attribution.provider for s in data.sessions}:
        assert f'fill="{shown[p]}"' in html, p
    return shown


def test_report_colours_are_distinct_under_deuteranopia(sample_dir: Path) -> None:
    shown = _report_colours(sample_dir)
    assert set(shown) == set(PROVIDERS)
    for deficiency in ("deutan", "protan", None):
        delta, a, b = _closest(shown, deficiency)
        assert delta >= MIN_DELTA_E, f"{a} and {b} are {delta:.1f} apart ({deficiency or 'normal vision'})"


def test_report_colours_stand_out_on_white() -> None:
    """Each bar and swatch has at least 3:1 contrast against the white page (WCAG 2.1, 1.4.11)."""
    white = Color("white")
    low = {
        p: round(Color(c).contrast(white, method="wcag21"), 2)
        for p, c in PAGE_COLOURS.items()
        if Color(c).contrast(white, method="wcag21") < 3.0
    }
    assert not low, low


def test_the_report_reads_the_one_table() -> None:
    assert set(SCREEN_COLOURS) == set(PAGE_COLOURS) == set(PROVIDERS)
    from musetui.core import report_html

    assert report_html.REPORT_COLOURS is PAGE_COLOURS
    assert all(report_html.colour(p) == PAGE_COLOURS[p] for p in PROVIDERS)
