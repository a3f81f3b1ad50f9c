"""Seeded text pools for the benchmark corpus: code, HTML, logs and prose to slice from.

The pools are built once per corpus and sliced at random offsets, which keeps the generator
fast while giving tool outputs realistic content: quotes, backslashes, newlines, tabs and
non-ASCII text.
"""

from __future__ import annotations

import random

NAMES = (
    "order",
    "invoice",
    "customer",
    "basket",
    "session",
    "report",
    "widget",
    "schedule",
    "booking",
    "inventory",
    "ticket",
    "profile",
    "payment",
    "gallery",
    "newsletter",
    "recipe",
    "shipment",
    "review",
)

CITIES = ("Leith", "Zürich", "São Paulo", "Kraków", "Tōkyō", "Montréal", "Reykjavík", "Aarhus")

_PY = '''"""@Name@ service: load, validate and store @name@ records."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("@name@")


@dataclass
class @Name@:
    id: int
    title: str
    city: str = "@city@"
    tags: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps({"id": self.id, "title": self.title, "city": self.city}, ensure_ascii=False)


def load_@name@s(path: Path) -> list[@Name@]:
    """Read one @name@ per line; skip blank lines and log bad ones."""
    out: list[@Name@] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            log.warning("line %d: %s — skipped", n, exc)
            continue
        out.append(@Name@(int(raw["id"]), raw.get("title", "untitled"), raw.get("city", "@city@")))
    return out


def summarise(items: list[@Name@]) -> str:
    by_city: dict[str, int] = {}
    for item in items:
        by_city[item.city] = by_city.get(item.city, 0) + 1
    return "\\n".join(f"{city}\\t{count}" for city, count in sorted(by_city.items()))
'''

_TSX = """import { useEffect, useState } from "react";
import type { @Name@ } from "../types/@name@";

interface Props {
  id: string;
  onSaved?: (value: @Name@) => void;
}

export function @Name@Editor({ id, onSaved }: Props) {
  const [value, setValue] = useState<@Name@ | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    fetch(`/api/@name@s/${encodeURIComponent(id)}`)
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))))
      .then(setValue)
      .catch((e: Error) => setError(e.message));
  }, [id]);

  if (error) return <p className="error" role="alert">Couldn’t load @name@: {error}</p>;
  if (!value) return <p aria-busy="true">Loading…</p>;

  return (
    <form
      className="@name@-editor"
      onSubmit={(e) => {
        e.preventDefault();
        onSaved?.(value);
      }}
    >
      <label htmlFor="title">Title</label>
      <input id="title" value={value.title} onChange={(e) => setValue({ ...value, title: e.target.value })} />
      <button type="submit">Save “{value.title}”</button>
    </form>
  );
}
"""

_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>@Name@s — @city@</title>
  <link rel="stylesheet" href="/css/site.css">
</head>
<body>
  <a class="skip-link" href="#main">Skip to content</a>
  <header class="site-header"><a href="/" class="brand">@Name@ & Co.</a></header>
  <main id="main">
    <h1>@Name@s in @city@</h1>
    <p class="lede">Everything about our @name@s — prices in €, opening hours, and “frequently asked” questions.</p>
    <table class="@name@-table">
      <thead><tr><th scope="col">Name</th><th scope="col">Price</th><th scope="col">Notes</th></tr></thead>
      <tbody>
        <tr><td>Standard</td><td>€@n@.00</td><td>Includes délivery</td></tr>
        <tr><td>Premium</td><td>€@m@.50</td><td>Same-day — if ordered before 11:00</td></tr>
      </tbody>
    </table>
    <img src="/img/@name@-960.webp" alt="A photo of a @name@ in @city@" width="960" height="640" loading="lazy">
  </main>
  <footer class="site-footer"><p>© 2026 @Name@ & Co. · @city@ · <a href="mailto:hello@@name@.example">hello@@name@.example</a></p></footer>
</body>
</html>
"""

_CSS = """.@name@-table {
  width: 100%;
  border-collapse: collapse;
  font-variant-numeric: tabular-nums;
}
.@name@-table th, .@name@-table td { padding: 0.5rem 0.75rem; border-bottom: 1px solid #e4ddd1; }
.@name@-table th { text-align: left; font-weight: 600; }
.@name@-editor { display: grid; gap: 0.5rem; max-width: 32rem; }
.@name@-editor input:focus-visible { outline: 3px solid #ffb454; outline-offset: 2px; }
@media (prefers-color-scheme: dark) {
  .@name@-table th, .@name@-table td { border-color: #3a3630; }
  body { background: #1c1a17; color: #efe8dc; }
}
.error::before { content: "⚠ "; }
"""

_LOG = """$ npm run build

> @name@-site@1.@n@.0 build
> vite build

vite v6.2.1 building for production...
✓ @m@@n@ modules transformed.
dist/index.html                   1.@n@ kB │ gzip: 0.62 kB
dist/assets/index-B@n@xQ@m@.css      9.41 kB │ gzip: 2.48 kB
dist/assets/index-D@m@kP@n@.js     148.07 kB │ gzip: 47.90 kB
✓ built in 1.@m@s
$ npx vitest run
 ✓ src/@name@.test.ts (12 tests) 31ms
 ✓ src/@name@Editor.test.tsx (5 tests) 88ms
 ❯ src/api.test.ts (4 tests | 1 failed) 19ms
   × returns 404 for a missing @name@
     → expected "Not found" to be "Not Found" // Object.is equality

 Test Files  1 failed | 2 passed (3)
      Tests  1 failed | 20 passed (21)
"""

_PYTEST = """============================= test session starts ==============================
platform linux -- Python 3.12.7, pytest-8.3.4, pluggy-1.5.0
rootdir: /home/dev/@name@-service
configfile: pyproject.toml
collected @n@ items

tests/test_@name@.py ........F....                                        [ 61%]
tests/test_api.py ........                                              [100%]

=================================== FAILURES ===================================
_________________________ test_load_skips_bad_lines __________________________

tmp_path = PosixPath('/tmp/pytest-of-dev/pytest-@m@/test_load_skips_bad_lines0')

    def test_load_skips_bad_lines(tmp_path):
        p = tmp_path / "@name@s.jsonl"
        p.write_text('{"id": 1, "title": "ok"}\\nnot json\\n{"id": 2, "title": "Größe"}\\n')
>       assert [x.id for x in load_@name@s(p)] == [1, 2]
E       AssertionError: assert [1] == [1, 2]
E         Right contains one more item: 2

tests/test_@name@.py:41: AssertionError
=========================== short test summary info ============================
FAILED tests/test_@name@.py::test_load_skips_bad_lines - AssertionError
========================= 1 failed, @n@ passed in 0.@m@s =========================
"""

_MD = """# @Name@ service

Small service that stores **@name@s** for the shop in @city@. It reads JSON Lines, validates
each record, and exposes `GET /api/@name@s/:id` and `POST /api/@name@s`.

## Running locally

```bash
python -m venv .venv && . .venv/bin/activate
pip install -e '.[dev]'
@name@-service --port 80@n@ --data ./data/@name@s.jsonl
```

## Notes
- Titles may contain any Unicode (“Crème brûlée”, «Käsekuchen», 抹茶ロール); keep `ensure_ascii=False`.
- Paths on Windows look like `C:\\Users\\dev\\@name@s` — escape backslashes in configs.
- The tab-separated summary uses a literal `\\t` between columns.
"""

_SQL = """-- migration 00@n@_@name@s.sql
CREATE TABLE IF NOT EXISTS @name@s (
    id          BIGSERIAL PRIMARY KEY,
    title       TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    city        TEXT NOT NULL DEFAULT '@city@',
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    meta        JSONB NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX IF NOT EXISTS @name@s_city_idx ON @name@s (city);
INSERT INTO @name@s (title, city, meta) VALUES
    ('Starter "classic"', '@city@', '{"tier": "basic"}'),
    ('O''Brien special', 'Dún Laoghaire', '{"tier": "premium", "note": "apostrophe test"}');
"""

TEMPLATES = (_PY, _TSX, _HTML, _CSS, _LOG, _PYTEST, _MD, _SQL)

SENTENCES = (
    "The user wants the change kept small, so I'll touch only the files involved.",
    "First I need to see how the existing code is laid out before editing anything.",
    "The failing test expects a capitalised message, which suggests the handler changed recently.",
    "Reading the config again: the port comes from an environment variable, not the file.",
    "That output shows the build is fine; the problem is only in the test fixture.",
    "I should check whether the function is used anywhere else before renaming it.",
    "The stylesheet already defines a focus style, but it is overridden further down.",
    "Two of the images are referenced but never generated, so the page shows broken links.",
    "Let me run the tests once more to be sure nothing else regressed.",
    "The JSON file has a trailing comma on line 14, which explains the parse error.",
    "Escaping matters here: the title can contain quotes and non-ASCII characters like “ü” or “é”.",
    "I'll add a regression test for the empty-input case so this does not come back.",
    "The migration is idempotent because of IF NOT EXISTS, so rerunning it is safe.",
    "This endpoint returns 500 when the id is not numeric; it should return 400 instead.",
    "The worker finished its part; I'll review the diff before merging it in.",
    "The lint step complains about an unused import left over from the refactor.",
    "Caching the parsed file would help, but only if the mtime check is reliable.",
    "I'm going to summarise what changed and what still needs a decision from the user.",
    "The log shows a timeout after 30 s, so the retry policy is the next thing to look at.",
    "Contrast on the secondary buttons is below 4.5:1, which fails WCAG AA.",
    "Splitting this into two commits will make the review easier.",
    "The date is parsed in local time here, which is why the test fails after 23:00 UTC.",
    "A small helper keeps the three call sites consistent.",
    "The dependency pin is too loose; a minor release changed the default behaviour.",
)

SUMMARY_TITLES = (
    "Inspecting the repository",
    "Planning the change",
    "Checking test failures",
    "Reviewing the diff",
    "Verifying the build",
    "Fixing the parser",
    "Auditing accessibility",
    "Updating the docs",
    "Tracing the timeout",
    "Summarising results",
)

PROMPTS = (
    "Fix the failing tests in the @name@ service and tell me what was wrong.",
    "Add a page listing all @name@s with prices, and link it from the header.",
    "The build is slow — find out why and make it faster without changing behaviour.",
    "Refactor load_@name@s so bad lines are skipped and logged, with a test.",
    "Make the @name@ editor accessible: labels, focus styles, error announcements.",
    "Write a migration for the @name@s table and update the API to use it.",
    "Review the last three commits for bugs and summarise what you find.",
    "Add dark-mode support to the site's stylesheet.",
    "Set up CI that runs lint, type-check and tests on every push.",
    "Translate the @name@ page into German and French; keep prices in €.",
)


class TextPool:
    """Large seeded strings to slice tool outputs and prose from."""

    def __init__(self, rng: random.Random, docs: int = 480) -> None:
        parts: list[str] = []
        for i in range(docs):
            name = NAMES[i % len(NAMES)]
            tpl = TEMPLATES[rng.randrange(len(TEMPLATES))]
            parts.append(
                tpl.replace("@Name@", name.capitalize())
                .replace("@name@", name)
                .replace("@city@", rng.choice(CITIES))
                .replace("@n@", str(rng.randint(2, 99)))
                .replace("@m@", str(rng.randint(1, 9)))
            )
        self.code = "\n".join(parts)
        self.code_len = len(self.code)
        prose = " ".join(rng.choice(SENTENCES) for _ in range(4000))
        self.prose_text = prose
        self.prose_len = len(prose)

    def code_slice(self, rng: random.Random, n: int) -> str:
        """Return about ``n`` characters of code/markup/log text, starting at a line start."""
        n = min(n, self.code_len - 1)
        start = rng.randrange(0, self.code_len - n)
        nl = self.code.find("\n", start, start + 200)
        if nl != -1:
            start = nl + 1
        return self.code[start : start + n]

    def prose(self, rng: random.Random, n: int) -> str:
        """Return about ``n`` characters of reasoning-like prose, starting at a sentence."""
        n = min(n, self.prose_len - 1)
        start = rng.randrange(0, self.prose_len - n)
        dot = self.prose_text.find(". ", start, start + 200)
        if dot != -1:
            start = dot + 2
        text = self.prose_text[start : start + n]
        end = text.rfind(". ", len(text) - 160)
        if end != -1:
            return text[: end + 1]
        space = text.rfind(" ")
        return text[:space] if space > 0 else text

    def summary(self, rng: random.Random) -> str:
        """Return a short Responses-style reasoning summary: a bold title and one sentence."""
        return f"**{rng.choice(SUMMARY_TITLES)}**\n\n{rng.choice(SENTENCES)}"

    def prompt(self, rng: random.Random) -> str:
        """Return a user prompt."""
        return rng.choice(PROMPTS).replace("@name@", rng.choice(NAMES))
