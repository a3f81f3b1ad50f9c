"""Text of the bundled sample story: a neighbourhood bakery's website, built by agents."""

from __future__ import annotations

WORKSPACE = "/home/dev/site"

BRIEF_MD = """# Juniper & Rye — website brief

Neighbourhood bakery and café on Great Junction Street, Leith. Open Tue–Sun, 7:30–15:00.

## Pages
1. **Home**: hero photo of the bread wall, one-line pitch, opening hours, “Order for pickup” button.
2. **Menu**: breads, pastries, cakes to order. Prices in £. Mark vegan (VG) and gluten-free (GF).
3. **Visit / contact**: map link, address, phone 0131 555 0142, a simple order-request form.

## Look
Warm, handmade, lots of cream and rye-brown. No frameworks, no trackers. Must load fast on a
phone on the bus, and must pass an accessibility check — Maggie’s dad uses a screen reader.

## Assets
Raw photos in `assets/raw/` (straight off the camera, 4–6 MB each).
"""

LIST_DIR_OUTPUT = """./
  brief.md                     1,021 B
  assets/
    raw/
      bread-wall.jpg           4.1 MB
      cinnamon-knots.jpg       5.3 MB
      counter-morning.jpg      4.8 MB
      sourdough-crumb.jpg      6.0 MB
      shopfront.jpg            3.9 MB
  site/                        (empty)
"""

PARENT_PROMPT = (
    "Build a small, fast website for Juniper & Rye, our neighbourhood bakery in Leith. "
    "Three pages: home, menu, visit/contact. Everything you need is in brief.md and the "
    "photos are in assets/raw/. Plain HTML and CSS please, no frameworks. Split the work "
    "across workers so it's quick, and tell me when it's ready in site/."
)

PARENT_REASONING_1 = (
    "The user wants a three-page static site for a bakery. Before planning anything I should "
    "look at the workspace: the brief, the raw photos, and whether site/ already has content. "
    "I'll list the directory and read brief.md in one go."
)

PARENT_REASONING_2 = (
    "The brief is clear: three pages (home, menu, visit), a warm palette of cream and rye-brown, "
    "no frameworks, fast on mobile, and it must be accessible because someone in the family uses "
    "a screen reader. The photos are 4–6 MB JPEGs, far too heavy for a phone on the bus, so they "
    "need resizing and converting to WebP.\n\nThree independent pieces of work:\n"
    "1. a stylesheet (palette, type scale, layout) — small, the mini model will do;\n"
    "2. the three HTML pages, using class names agreed up front so they match the CSS;\n"
    "3. image optimisation to site/img/ at 480/960/1600 px widths — also mini.\n"
    "I'll fix the class vocabulary now (site-header, hero, menu-grid, item, tag, hours, "
    "order-form) and pass it to both the CSS and the HTML worker."
)

PARENT_PLAN_MESSAGE = (
    "Here's the plan:\n\n"
    "- **Styles**: one `css/styles.css` with the cream/rye palette and a mobile-first layout.\n"
    "- **Pages**: `index.html`, `menu.html`, `visit.html`, sharing a header and footer.\n"
    "- **Photos**: the five raw JPEGs resized to 480/960/1600 px WebP in `site/img/`.\n\n"
    "I'm starting three workers now and will check their output when they finish."
)

CLASS_VOCAB = (
    "Use these class names: site-header, nav, hero, hero__pitch, button, hours, menu-grid, "
    "item, item__price, tag, tag--vg, tag--gf, order-form, site-footer."
)

CSS_TASK = (
    "Write site/css/styles.css for the Juniper & Rye bakery site. Palette: cream #fbf6ec, "
    "rye brown #5a3e2b, crust #b5651d, ink #2b2118. Mobile-first, system font stack with a serif "
    "for headings, max width 60rem. " + CLASS_VOCAB
)

HTML_TASK = (
    "Write site/index.html, site/menu.html and site/visit.html from brief.md. Semantic HTML5, "
    "one <h1> per page, shared header/nav and footer, link css/styles.css, images from img/ "
    "(bread-wall, cinnamon-knots, sourdough-crumb, shopfront; WebP, 960w default with srcset). " + CLASS_VOCAB
)

IMG_TASK = (
    "Convert every JPEG in assets/raw/ to WebP at widths 480, 960 and 1600 into site/img/ "
    "(name-480.webp etc.), quality 78, strip metadata. Report total size before and after."
)

AUDIT_TASK = (
    "Audit site/ for accessibility (WCAG 2.2 AA): landmarks, headings, alt text, form labels, "
    "colour contrast, focus visibility, skip link. Report each issue with file, selector and a "
    "concrete fix. Do not edit files."
)

STYLES_CSS = """:root {
  --cream: #fbf6ec;
  --rye: #5a3e2b;
  --crust: #b5651d;
  --ink: #2b2118;
  --radius: 0.6rem;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--ink);
  background: var(--cream);
}

h1, h2, h3 { font-family: Georgia, "Times New Roman", serif; color: var(--rye); line-height: 1.15; }
body { margin: 0; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }

.site-header { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between;
  padding: 0.75rem 1rem; background: var(--rye); color: var(--cream); }
.site-header a { color: var(--cream); text-decoration: none; }
.nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }

.hero { position: relative; }
.hero img { width: 100%; height: auto; border-radius: var(--radius); }
.hero__pitch { font-size: 1.35rem; }

.button { display: inline-block; padding: 0.7rem 1.2rem; border-radius: var(--radius);
  background: var(--crust); color: #fff8ee; font-weight: 600; text-decoration: none; }

.hours { border-left: 4px solid var(--crust); padding-left: 0.75rem; }

.menu-grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); }
.item { background: #fff; border-radius: var(--radius); padding: 1rem; }
.item__price { float: right; font-weight: 700; }
.tag { font-size: 0.75rem; padding: 0.1rem 0.4rem; border-radius: 0.3rem; color: #c9b8a6; }
.tag--vg { background: #3f6b3a; }
.tag--gf { background: #6b4f3a; }

.order-form { display: grid; gap: 0.75rem; max-width: 30rem; }
.order-form input, .order-form textarea { padding: 0.5rem; border: 1px solid #cdbfa9; }

.site-footer { margin-top: 3rem; padding: 1.5rem 1rem; background: var(--ink); color: #e9dfcf; }

@media (min-width: 48rem) {
  .hero__pitch { font-size: 1.6rem; }
}
"""

_HEADER = """  <header class="site-header">
    <a href="index.html" class="brand">Juniper &amp; Rye</a>
    <nav class="nav" aria-label="Main">
      <ul><li><a href="index.html">Home</a></li><li><a href="menu.html">Menu</a></li><li><a href="visit.html">Visit</a></li></ul>
    </nav>
  </header>"""

_FOOTER = """  <footer class="site-footer">
    <p>Juniper &amp; Rye · 41 Great Junction Street, Leith, Edinburgh EH6 5HX · 0131 555 0142</p>
  </footer>"""


def _page(title: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="en-GB">\n<head>\n  <meta charset="utf-8">\n'
        '  <meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"  <title>{title}</title>\n"
        '  <link rel="stylesheet" href="css/styles.css">\n</head>\n<body>\n'
        f"{_HEADER}\n  <main>\n{body}\n  </main>\n{_FOOTER}\n</body>\n</html>\n"
    )


INDEX_HTML = _page(
    "Juniper & Rye — bakery & café in Leith",
    """    <section class="hero">
      <img src="img/bread-wall-960.webp" srcset="img/bread-wall-480.webp 480w, img/bread-wall-960.webp 960w, img/bread-wall-1600.webp 1600w" sizes="100vw" alt="" width="960" height="640">
      <h1>Bread, baked slowly, on Great Junction Street</h1>
      <p class="hero__pitch">Sourdough, rye and cardamom buns from 7:30 — until they’re gone.</p>
      <a class="button" href="visit.html#order">Order for pickup</a>
    </section>
    <section class="hours">
      <h2>Opening hours</h2>
      <p>Tuesday – Sunday, 7:30 – 15:00. Closed Mondays.</p>
    </section>""",
)

MENU_HTML = _page(
    "Menu — Juniper & Rye",
    """    <h1>Menu</h1>
    <div class="menu-grid">
      <article class="item"><h2>Country sourdough</h2><span class="item__price">£5.20</span><p>48-hour ferment, 800 g. <span class="tag tag--vg">VG</span></p></article>
      <article class="item"><h2>Dark rye &amp; caraway</h2><span class="item__price">£5.80</span><p>Danish-style rugbrød. <span class="tag tag--vg">VG</span></p></article>
      <article class="item"><h2>Cardamom knot</h2><span class="item__price">£3.40</span><p>Laminated, pearl sugar.</p></article>
      <article class="item"><h2>Almond &amp; orange cake</h2><span class="item__price">£3.90</span><p>Flourless. <span class="tag tag--gf">GF</span></p></article>
    </div>
    <img src="img/cinnamon-knots-960.webp" alt="A tray of cinnamon knots dusted with sugar" width="960" height="640">""",
)

VISIT_HTML = _page(
    "Visit & order — Juniper & Rye",
    """    <h1>Visit us</h1>
    <img src="img/shopfront-960.webp" alt="The green shopfront of Juniper &amp; Rye" width="960" height="640">
    <p>41 Great Junction Street, Leith · <a href="https://www.openstreetmap.org/?mlat=55.9745&amp;mlon=-3.1736">map</a></p>
    <h2 id="order">Order for pickup</h2>
    <form class="order-form" action="/api/order" method="post">
      <input name="name" placeholder="Your name">
      <input name="phone" type="tel" placeholder="Phone">
      <textarea name="items" placeholder="What would you like?"></textarea>
      <button class="button" type="submit">Send request</button>
    </form>""",
)

IMG_SHELL_CMD = (
    'mkdir -p site/img && for f in assets/raw/*.jpg; do n=$(basename "$f" .jpg); '
    'for w in 480 960 1600; do cwebp -quiet -q 78 -metadata none -resize "$w" 0 "$f" '
    '-o "site/img/$n-$w.webp"; done; done && du -ch assets/raw/*.jpg | tail -1 && '
    "du -ch site/img/*.webp | tail -1"
)

IMG_SHELL_OUTPUT = "24M\ttotal\n1.9M\ttotal\n"

AUDIT_REPORT = """## Accessibility audit — site/ (WCAG 2.2 AA)

**Summary:** 4 issues (2 serious, 2 moderate). Landmarks, heading order and `lang` are fine.

1. **Serious — 1.4.3 Contrast.** `.tag` text `#c9b8a6` on `.tag--vg` `#3f6b3a` is 3.1:1 and on
   `.tag--gf` `#6b4f3a` is 2.6:1 (needs 4.5:1). Fix: `.tag { color: #ffffff; }` (7.0:1 and 8.4:1).
2. **Serious — 3.3.2 Labels.** `visit.html` `.order-form` inputs rely on `placeholder` only. Fix:
   add `<label for=…>` for name, phone and items, and `autocomplete="name"` / `"tel"`.
3. **Moderate — 2.4.1 Bypass blocks.** No skip link. Fix: `<a class="skip-link" href="#main">Skip
   to content</a>` as the first child of `<body>`, and `id="main"` on `<main>`.
4. **Moderate — 2.4.7 Focus visible.** `.button` and nav links have no visible focus style on the
   brown header. Fix: `:focus-visible { outline: 3px solid #ffd28a; outline-offset: 2px; }`.

Alt text is present and descriptive on `menu.html` and `visit.html`; the hero image on
`index.html` is correctly decorative (`alt=""`).
"""

AXE_OUTPUT = """Running axe-core 4.10.2 in chrome-headless
Testing http://localhost:8080/index.html ... 2 violations found!
  Violation of "color-contrast" with 0 occurrences on index.html
  Violation of "region" with 1 occurrences:
    body > a.skip-link (missing)
Testing http://localhost:8080/menu.html ... 1 violation found!
  Violation of "color-contrast" with 4 occurrences:
    .tag--vg (contrast ratio 3.1:1), .tag--gf (contrast ratio 2.6:1)
Testing http://localhost:8080/visit.html ... 2 violations found!
  Violation of "label" with 3 occurrences:
    input[name="name"], input[name="phone"], textarea[name="items"]
5 accessibility issues detected.
"""

CONTRAST_CMD = (
    "python3 - <<'EOF'\nfrom wcag_contrast_ratio import rgb, contrast\n"
    "pairs = {'vg': ('#c9b8a6', '#3f6b3a'), 'gf': ('#c9b8a6', '#6b4f3a'), "
    "'vg-fix': ('#ffffff', '#3f6b3a'), 'gf-fix': ('#ffffff', '#6b4f3a'), "
    "'button': ('#fff8ee', '#b5651d')}\n"
    "for k, (fg, bg) in pairs.items():\n    print(k, round(contrast(rgb(fg), rgb(bg)), 2))\nEOF"
)

CONTRAST_OUTPUT = "vg 3.08\ngf 2.57\nvg-fix 6.98\ngf-fix 8.41\nbutton 4.52\n"

AUDIT_SUMMARIES = [
    "**Planning the audit**\n\nI'm going to check the three pages against WCAG 2.2 AA: structure "
    "first, then run axe on each page, then verify colour contrast numerically.",
    "**Verifying contrast ratios**\n\nAxe flags the diet tags. I'm computing exact ratios for the "
    "current colours and for white text to propose a fix that clears 4.5:1.",
    "**Writing up findings**\n\nFour issues, two serious. I'm grouping them by severity with a concrete fix for each.",
]

PARENT_FINAL = (
    "The site is ready in `site/`:\n\n"
    "- `index.html`, `menu.html`, `visit.html` with a shared header and footer\n"
    "- `css/styles.css` (cream/rye palette, mobile-first)\n"
    "- 15 WebP images in `site/img/` — the photos went from 24 MB to 1.9 MB\n\n"
    "An accessibility audit found four issues, all fixed: tag contrast (now 7:1), labels on the "
    "order form, a skip link, and visible focus outlines. The order form posts to `/api/order`, "
    "which doesn't exist yet — that's the next job."
)

CODEX_BASE_INSTRUCTIONS = (
    "You are Codex, a coding agent based on GPT-5. You and the user share the same workspace "
    "and collaborate to achieve the user's goals.\n\n# Personality\n\nYou are a pragmatic, "
    "effective software engineer. You take engineering quality seriously, and communicate "
    "concisely.\n\n# Editing constraints\n\n- Default to ASCII when editing or creating files.\n"
    "- Prefer apply_patch for single file edits.\n- Never revert changes you did not make."
)

CODEX_PERMISSIONS = (
    "<permissions instructions>\nFilesystem sandboxing defines which files can be read or "
    "written. `sandbox_mode` is `workspace-write`: the workspace and /tmp are writable. Network "
    "access is restricted. Approval policy is `on-request`.\n</permissions instructions>"
)

CODEX_ENV_CONTEXT = (
    "<environment_context>\n  <cwd>/home/dev/site</cwd>\n  <shell>bash</shell>\n"
    "  <current_date>2026-09-01</current_date>\n  <timezone>Europe/London</timezone>\n"
    "</environment_context>"
)

CODEX_PROMPT = (
    "The order form on visit.html posts to /api/order but nothing handles it. Add a tiny "
    "stdlib-only Python handler: validate name, phone and items, append each request to "
    "orders.jsonl, and return a friendly HTML thank-you page. Get a sub-agent to write tests."
)

#: The summary a local compaction leaves in the Codex parent's history (as a user message).
CODEX_COMPACT_SUMMARY = (
    "Summary of the work so far, for the model continuing it: api/order.py handles POST "
    "/api/order (validates name, phone and items; appends one JSON line per order to "
    "orders.jsonl; returns an HTML-escaped thank-you page, or 400 with a list of problems). "
    "Sub-agent Hypatia wrote tests/test_order.py: 3 tests, all passing. Next: run the whole "
    "suite once more and report."
)

ORDER_PY = '''"""POST /api/order: validate an order request and append it to orders.jsonl."""

from __future__ import annotations

import html
import json
import re
import time
from pathlib import Path
from urllib.parse import parse_qs

ORDERS = Path(__file__).resolve().parent.parent / "orders.jsonl"
PHONE = re.compile(r"^[0-9 +()-]{7,20}$")


def handle(body: bytes) -> tuple[int, str]:
    """Return (status, html) for a form-encoded order request."""
    form = {k: v[0].strip() for k, v in parse_qs(body.decode("utf-8")).items()}
    errors = []
    if not form.get("name"):
        errors.append("Please tell us your name.")
    if not PHONE.match(form.get("phone", "")):
        errors.append("That phone number doesn\\'t look right.")
    if not form.get("items"):
        errors.append("What would you like to order?")
    if errors:
        return 400, "<ul>" + "".join(f"<li>{html.escape(e)}</li>" for e in errors) + "</ul>"
    record = {"t": time.time(), **{k: form[k] for k in ("name", "phone", "items")}}
    with ORDERS.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\\n")
    return 200, f"<p>Thanks, {html.escape(form['name'])} — we’ll call you to confirm.</p>"
'''

TEST_ORDER_PY = """from api import order


def test_valid_order_is_appended(tmp_path, monkeypatch):
    monkeypatch.setattr(order, "ORDERS", tmp_path / "orders.jsonl")
    status, page = order.handle(b"name=Maggie&phone=0131+555+0142&items=2+cardamom+knots")
    assert status == 200
    assert "Maggie" in page
    assert (tmp_path / "orders.jsonl").read_text().count("\\n") == 1


def test_missing_fields_are_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(order, "ORDERS", tmp_path / "orders.jsonl")
    status, page = order.handle(b"name=&phone=abc&items=")
    assert status == 400
    assert page.count("<li>") == 3


def test_name_is_escaped(tmp_path, monkeypatch):
    monkeypatch.setattr(order, "ORDERS", tmp_path / "orders.jsonl")
    status, page = order.handle(b"name=%3Cb%3EJo%3C%2Fb%3E&phone=07700900123&items=rye")
    assert status == 200
    assert "<b>" not in page
"""

CLAUDE_PROMPT = (
    "Set up deployment for site/ to GitHub Pages with a workflow, and add a Lighthouse CI check "
    "that fails if accessibility drops under 0.95. First make sure every image the HTML "
    "references actually exists in site/img/."
)

PAGES_YML = """name: Deploy site to Pages

on:
  push:
    branches: [main]
  workflow_dispatch:

permissions:
  contents: read
  pages: write
  id-token: write

concurrency:
  group: pages
  cancel-in-progress: true

jobs:
  lighthouse:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 22
      - run: npx --yes @lhci/cli@0.14 autorun --config=lighthouserc.json

  deploy:
    needs: lighthouse
    runs-on: ubuntu-latest
    environment:
      name: github-pages
      url: ${{ steps.deployment.outputs.page_url }}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/configure-pages@v5
      - uses: actions/upload-pages-artifact@v3
        with:
          path: site
      - id: deployment
        uses: actions/deploy-pages@v4
"""

LHCI_OUTPUT = """✅  .lighthouseci/ directory writable
✅  Configuration file found
Running Lighthouse 3 time(s) on http://localhost:4173/index.html
Run #1...done.
Run #2...done.
Run #3...done.
Running Lighthouse 3 time(s) on http://localhost:4173/menu.html
Run #1...done.
Run #2...done.
Run #3...done.
Done running Lighthouse!

Checking assertions against 2 URL(s), 6 total run(s)

All results processed!
  index.html  performance 0.98  accessibility 1.00  best-practices 1.00  seo 0.92
  menu.html   performance 0.97  accessibility 0.98  best-practices 1.00  seo 0.92
"""
