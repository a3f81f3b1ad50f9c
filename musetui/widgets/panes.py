"""The side panes: Raw, IDs, Signature, Reasoning and Evidence.

Each pane renders the selected item, or the whole session when no item is selected.
Transcript data only ever reaches the screen as rich ``Text``/``Syntax`` built from
control-stripped strings: never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import orjson
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.strip import Strip

from musetui.core.fingerprints.types import Decoded
from musetui.core.model import Item, SessionSummary, fmt_gap
from musetui.core.reasons import flag_sentences
from musetui.core.report import human_bytes, verdict_line
from musetui.core.segment_read import describe_segment, segment_at, segments_of
from musetui.messages import FocusBack
from musetui.widgets.doc import Doc as Doc
from musetui.widgets.doc import Rows as Rows  # (re-exported: the panes' callers lay Docs out)
from musetui.widgets.doc import warm_syntax as warm_syntax
from musetui.widgets.item_list import blob_length
from musetui.widgets.repaint import set_virtual_height
from musetui.widgets.text import LineView, clean, clean_block, clean_name, stamp

if TYPE_CHECKING:
    from musetui.core.session import OpenedSession

#: Detectors shown in the Signature pane; every other decoded value is an id.
SIGNATURE_DETECTORS = frozenset(
    {
        "fernet",
        "anthropic-signature",
        "anthropic-web-search",
        "gemini-signature",
        "empty-signature",
        "muse-gpt-responses-tag",
    }
)
#: The most JSON the Raw pane pretty-prints (bigger items are cut, with a note).
RAW_PRETTY_LIMIT = 120_000
#: The most decoded values listed for a whole session.
SESSION_LIST_LIMIT = 400


@dataclass
class PaneContext:
    """What the panes show: a session, and optionally one of its items."""

    summary: SessionSummary | None = None
    display_path: str = ""
    opened: OpenedSession | None = None
    item: Item | None = None
    decoded: Sequence[Decoded] = field(default_factory=tuple)
    session_decoded: Sequence[tuple[int, Decoded]] | None = None
    session_decoded_capped: bool = False
    session_reasoning: Sequence[tuple[int, int, str, str]] | None = None
    hit_terms: Sequence[str] = ()
    #: Bumped by the screen when summaries may have changed in place (fleet flags, notes).
    generation: int = 0


def _same(a: tuple[object, ...], b: tuple[object, ...] | None) -> bool:
    """True when two dependency tuples hold the very same objects (equal values for scalars)."""
    if b is None or len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x is y:
            continue
        if type(x) is type(y) and isinstance(x, int | str | float) and x == y:
            continue
        return False
    return True


def _who(provider: str | None, host: str | None) -> str:
    who = provider or "no provider"
    return f"{who}/{host}" if host else who


def _line_time(ctx: PaneContext, index: int) -> tuple[int, float | None]:
    if ctx.opened is not None and 0 <= index < len(ctx.opened.items):
        it = ctx.opened.items[index]
        return it.line, it.time
    return 0, None


STRENGTH_ORDER = {"strong": 0, "medium": 1, "weak": 2}


def decoded_doc(dec: Decoded, line: int, line_time: float | None, *, show_value: bool = True) -> Doc:
    """One decoded fingerprint: value, detector, every field, time and Δ to the line, meaning."""
    doc = Doc()
    if show_value:
        doc.add(Text(clean_name(dec.value, 160), style="bold"))
    head = Text()
    head.append(dec.detector, style="cyan")
    head.append(f" → {_who(dec.provider, dec.host)} · {dec.strength} ")
    head.append(f"[{dec.tag}]", style="green" if dec.tag == "verified" else "yellow")
    rows: list[tuple[str, str | Text]] = [("detector", head)]
    for k, v in dec.fields:
        if k == "minted" and dec.time is not None:
            continue
        rows.append((clean(k, 24), clean(v, 300)))
    if (
        show_value
        and dec.shape
        and dec.shape != dec.detector
        and not any(k in ("layout", "class", "shape") for k, _ in dec.fields)
    ):
        rows.append(("shape", clean(dec.shape, 60)))
    if dec.time is not None:
        when = Text(stamp(dec.time))
        if line_time is not None:
            when.append(f"  Δ {fmt_gap(dec.time, line_time)} from line {line}", style="bold")
        elif line:
            when.append(f"  (line {line})", style="dim")
        rows.append(("minted", when))
    elif line:
        rows.append(("line", str(line)))
    if dec.problems:
        rows.append(("problems", Text(", ".join(dec.problems), style="bold red")))
    if dec.meaning:
        rows.append(("meaning", Text(clean(dec.meaning, 400), style="italic")))
    doc.rows(rows)
    return doc


class DetailPane(LineView):
    """A scrolling pane drawn with the Line API: its Doc is rendered to lines once per width.

    A ``Static`` holding rich Tables was rendered again for every reflow (once to measure its
    height, once to draw it); here a change of context costs one render of the visible pane.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "down,j",
            "scroll_down",
            "Down",
            show=False,
            id="pane.down",
            tooltip="Scroll the pane down",
        ),
        Binding("up,k", "scroll_up", "Up", show=False, id="pane.up", tooltip="Scroll the pane up"),
        Binding(
            "h,backspace",
            "back",
            "Back",
            show=False,
            id="pane.back",
            tooltip="Back to the item list",
        ),
    ]

    DEFAULT_CSS = """
    DetailPane {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
        overflow-y: auto;
    }
    """

    title: ClassVar[str] = ""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._ctx = PaneContext()
        self._dirty = True
        self._built_from: tuple[object, ...] | None = None
        self._doc = Doc()
        self._lines: list[Strip] = []
        self._lines_width = -1
        self.plain = ""

    def set_context(self, ctx: PaneContext, visible: bool) -> None:
        """Remember ``ctx``; render now if the pane is visible, else when it is shown."""
        self._ctx = ctx
        self._dirty = True
        if visible:
            self.render_now()

    def render_now(self) -> None:
        """Build the current context's Doc (if it changed) and lay it out at the pane's width."""
        if not self._dirty:
            return
        self._dirty = False
        depends = (self._ctx.generation, *self.depends(self._ctx))
        if _same(depends, self._built_from):
            return
        self._built_from = depends
        self._doc = self.build(self._ctx)
        self.plain = self._doc.plain
        self._lines_width = -1
        self.scroll_to(0, 0, animate=False, immediate=True)
        self._layout_lines()
        self.refresh()

    def build(self, ctx: PaneContext) -> Doc:
        """The content of the pane for ``ctx``."""
        raise NotImplementedError

    def depends(self, ctx: PaneContext) -> tuple[object, ...]:
        """The parts of ``ctx`` that ``build`` reads: the same parts give the same Doc."""
        return (
            ctx.summary,
            ctx.display_path,
            ctx.opened,
            ctx.item,
            ctx.decoded,
            ctx.session_decoded,
            ctx.session_decoded_capped,
            ctx.session_reasoning,
            ctx.hit_terms,
        )

    def _layout_lines(self) -> None:
        """Render the Doc to lines at the content width, leaving room for a scrollbar it needs."""
        width = self.content_region.width
        if width <= 0 or not self.is_mounted:
            return
        if width == self._lines_width:
            return
        # A Doc taller than the pane shows a scrollbar, one column narrower: a long Doc (the
        # costly kind) is rendered once at that width, a short one again at the full width.
        # A stand-in shown while the content is read keeps the scrollbar there is, so the
        # session's content (long, as a rule) lays the screen out again only if it is short.
        keep = self._doc.interim and self.show_vertical_scrollbar
        narrower = max(1, width - self.styles.scrollbar_size_vertical)
        lines = self._doc.render(self.app.console, narrower)
        if len(lines) <= self.content_region.height and narrower != width and not keep:
            lines = self._doc.render(self.app.console, width)
        self._lines = lines
        self._lines_width = width
        set_virtual_height(self, max(len(lines), self.virtual_size.height) if keep else len(lines))

    def _on_resize(self, event: events.Resize) -> None:
        self._layout_lines()

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._lines_width != self.content_region.width:
            self._layout_lines()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        if self._paint is None and self._lines_width != self.content_region.width:
            self._layout_lines()
        index = self.row_index(y)
        if index >= len(self._lines):
            return self.blank_row()
        base, width = self.paint()
        return self._lines[index].crop_extend(0, width, None).apply_style(base)

    def action_back(self) -> None:
        self.post_message(FocusBack("pane"))


def _no_session() -> Doc:
    return Doc().note("No session selected. Move in the tree (j/k) and press enter.")


class RawPane(DetailPane):
    """The raw item as pretty JSON, with its file, line and byte range."""

    title = "Raw"

    def depends(self, ctx: PaneContext) -> tuple[object, ...]:
        if ctx.item is None or ctx.opened is None:
            return (ctx.summary, ctx.display_path)
        return (ctx.summary, ctx.display_path, ctx.opened, ctx.item, ctx.hit_terms)

    def build(self, ctx: PaneContext) -> Doc:
        s = ctx.summary
        if s is None:
            return _no_session()
        item = ctx.item
        doc = Doc()
        if item is None or ctx.opened is None:
            doc.heading("Session file")
            rows: list[tuple[str, str | Text]] = [
                ("file", ctx.display_path or s.abspath),
                ("format", f"{s.format} ({s.format_rule})"),
                (
                    "size",
                    f"{human_bytes(s.size)} ({s.size:,} bytes) · {s.items:,} item{'s' if s.items != 1 else ''} · "
                    f"{s.malformed_lines} malformed line{'s' if s.malformed_lines != 1 else ''}",
                ),
            ]
            for m in s.malformed[:20]:
                rows.append(
                    (
                        "malformed",
                        Text(f"line {m.line} (byte {m.offset}): {clean(m.reason, 200)}", style="red"),
                    )
                )
            doc.rows(rows)
            record = s.record()
            record.pop("evidence", None)
            doc.blank().heading("Scan record")
            doc.syntax(clean_block(orjson.dumps(record, option=orjson.OPT_INDENT_2).decode()))
            doc.note("Press enter to open the items, then j/k: this pane shows the selected raw line.")
            return doc
        end = item.offset + item.length
        lines = f"{item.line}" if item.lines <= 1 else f"{item.line}–{item.line + item.lines - 1}"
        head = Text()
        head.append(clean_name(ctx.display_path or s.abspath), style="bold")
        head.append(f":{lines}", style="bold cyan")
        doc.add(head)
        doc.add(Text(f"line {lines} · bytes {item.offset:,}–{end:,} ({item.length:,} bytes)", style="dim"))
        try:
            pretty = orjson.dumps(item.raw, option=orjson.OPT_INDENT_2).decode()
        except (TypeError, orjson.JSONEncodeError):
            pretty = ctx.opened.raw(item).decode("utf-8", "replace")
        note = None
        if len(pretty) > RAW_PRETTY_LIMIT:
            note = f"(pretty JSON cut at {RAW_PRETTY_LIMIT:,} of {len(pretty):,} characters; y copies the report)"
            pretty = pretty[:RAW_PRETTY_LIMIT]
        doc.syntax(clean_block(pretty, RAW_PRETTY_LIMIT), ctx.hit_terms)
        if doc.highlighted:
            doc.note(f"{doc.highlighted} match{'es' if doc.highlighted != 1 else ''} of the search highlighted")
        if note:
            doc.note(note)
        return doc


class IdsPane(DetailPane):
    """Every decoded id of the item (or session): value, layout, time, Δ, marker, meaning."""

    title = "IDs"

    def depends(self, ctx: PaneContext) -> tuple[object, ...]:
        if ctx.item is None:
            return (ctx.summary, ctx.opened, ctx.session_decoded, ctx.session_decoded_capped)
        return (ctx.summary, ctx.opened, ctx.item)  # (its decoded values follow from the item)

    def build(self, ctx: PaneContext) -> Doc:
        if ctx.summary is None:
            return _no_session()
        if ctx.item is not None:
            ids = [d for d in ctx.decoded if d.detector not in SIGNATURE_DETECTORS]
            doc = Doc().heading(f"IDs on line {ctx.item.line} ({len(ids)})")
            if not ids:
                return doc.note("No decodable ids on this item.")
            for d in _by_strength(ids):
                doc.extend(decoded_doc(d, ctx.item.line, ctx.item.time))
            return doc
        return _session_list(ctx, signatures=False)


def _by_strength(decs: Sequence[Decoded]) -> list[Decoded]:
    return sorted(decs, key=lambda d: STRENGTH_ORDER.get(d.strength, 3))


def _session_list(ctx: PaneContext, *, signatures: bool) -> Doc:
    what = "Signatures and blobs" if signatures else "IDs"
    doc = Doc()
    if ctx.session_decoded is None:
        return doc.heading(f"{what} in this session").waiting("decoding the session…")
    rows = [(i, d) for i, d in ctx.session_decoded if (d.detector in SIGNATURE_DETECTORS) == signatures]
    rows.sort(key=lambda r: STRENGTH_ORDER.get(r[1].strength, 3))
    doc.heading(f"{what} in this session ({len(rows)} distinct)")
    if not rows:
        doc.note("None found.")
    for index, d in rows[:SESSION_LIST_LIMIT]:
        line, t = _line_time(ctx, index)
        doc.extend(decoded_doc(d, line, t))
    if len(rows) > SESSION_LIST_LIMIT:
        doc.note(f"… {len(rows) - SESSION_LIST_LIMIT:,} more not listed")
    if ctx.session_decoded_capped:
        doc.note("(only the first items of this large session were decoded)")
    doc.note("Select an item (enter, then j/k) to see only its values.")
    return doc


class SignaturePane(DetailPane):
    """Signatures and encrypted blobs: type tag, Fernet header, protobuf fields, lengths."""

    title = "Signature"

    def depends(self, ctx: PaneContext) -> tuple[object, ...]:
        if ctx.item is None:
            return (ctx.summary, ctx.opened, ctx.session_decoded, ctx.session_decoded_capped)
        return (ctx.summary, ctx.opened, ctx.item)  # (its decoded values follow from the item)

    def build(self, ctx: PaneContext) -> Doc:
        if ctx.summary is None:
            return _no_session()
        if ctx.item is None:
            return _session_list(ctx, signatures=True)
        sigs = [d for d in ctx.decoded if d.detector in SIGNATURE_DETECTORS]
        doc = Doc().heading(f"Signatures on line {ctx.item.line} ({len(sigs)})")
        if not sigs:
            doc.note("No signature or encrypted blob on this item.")
        for d in sigs:
            doc.add(Text(clean_name(d.value, 96), style="bold"))
            truncated = "truncated" in d.problems
            length = Text(f"{len(d.value):,} characters · " + ("TRUNCATED" if truncated else "whole"))
            if truncated:
                length.stylize("bold red")
            shape = f" ({d.shape})" if d.shape and d.shape != d.detector else ""
            doc.rows([("type", f"{d.detector}{shape}"), ("length", length)])
            doc.extend(decoded_doc(d, ctx.item.line, ctx.item.time, show_value=False))
        return doc


class ReasoningPane(DetailPane):
    """The item's reasoning: visible text; or summary + encrypted blob; or redacted."""

    title = "Reasoning"

    def depends(self, ctx: PaneContext) -> tuple[object, ...]:
        if ctx.item is None:
            return (ctx.summary, ctx.session_reasoning, ctx.session_decoded_capped)
        return (ctx.summary, ctx.opened, ctx.item)

    def build(self, ctx: PaneContext) -> Doc:
        s = ctx.summary
        if s is None:
            return _no_session()
        item = ctx.item
        if item is None:
            return self._session(ctx)
        kind = item.reasoning
        doc = Doc()
        if kind is None:
            if item.kind != "reasoning":
                return doc.note(f"Line {item.line} is a {item.kind} item: it carries no reasoning.")
            kind = "visible"
        doc.heading(f"Reasoning on line {item.line}: {kind}")
        if kind == "encrypted":
            blob = next(
                (d for d in ctx.decoded if d.detector in ("fernet", "anthropic-signature", "gemini-signature")),
                None,
            )
            n = blob_length(item.raw)
            desc = Text(f"encrypted, {n:,} bytes", style="bold yellow")
            if blob is not None and blob.time is not None:
                desc.append(f", minted {stamp(blob.time)}", style="bold yellow")
                if item.time is not None:
                    desc.append(f" (Δ {fmt_gap(blob.time, item.time)} from the line)", style="dim")
            elif blob is not None:
                desc.append(f" ({blob.detector})", style="dim")
            doc.add(desc)
            if item.text:
                doc.blank().heading("Summary (visible)")
                doc.add(Text(clean_block(item.text, 50_000)))
            else:
                doc.note("No summary text: only the encrypted blob was recorded.")
        elif kind == "redacted":
            doc.add(Text("redacted: the provider withheld this reasoning", style="bold red"))
            n = blob_length(item.raw)
            if n:
                doc.note(f"{n:,} bytes of redacted data")
        else:
            if kind == "empty-signature":
                doc.add(Text("visible text with an EMPTY signature (no provider signed it)", style="bold"))
            doc.add(Text(clean_block(item.text or "(empty)", 100_000)))
        return doc

    def _session(self, ctx: PaneContext) -> Doc:
        doc = Doc()
        rs = ctx.session_reasoning
        if rs is None:
            return doc.heading("Reasoning in this session").waiting("reading the session…")
        counts: dict[str, int] = {}
        for _i, _line, mark, _text in rs:
            counts[mark] = counts.get(mark, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none"
        doc.heading(f"Reasoning in this session: {len(rs)} items ({summary})")
        rows: list[tuple[str, str | Text]] = []
        for _i, line, mark, text in rs[:SESSION_LIST_LIMIT]:
            value = Text()
            value.append(f"{mark} ", style="bold yellow" if mark == "encrypted" else "bold")
            value.append(clean(text, 120))
            rows.append((f"line {line}", value))
        doc.rows(rows)
        if len(rs) > SESSION_LIST_LIMIT:
            doc.note(f"… {len(rs) - SESSION_LIST_LIMIT:,} more")
        if ctx.session_decoded_capped:
            doc.note("(only the first items of this large session were read)")
        return doc


class EvidencePane(DetailPane):
    """The verdict, its confidence and flags, and every evidence record with its tag."""

    title = "Evidence"

    def depends(self, ctx: PaneContext) -> tuple[object, ...]:
        return (ctx.summary, ctx.item.line if ctx.item is not None else None)

    def build(self, ctx: PaneContext) -> Doc:
        s = ctx.summary
        if s is None:
            return _no_session()
        a = s.attribution
        doc = Doc()
        verdict = Text(clean(verdict_line(s)), style="bold")  # (the words of show's Verdict line)
        if a.flags:
            verdict.stylize("red", verdict.plain.rfind(" · flags: ") + 3)
        rows: list[tuple[str, str | Text]] = [("verdict", verdict)]
        rows.append(("why", clean(a.summary) if a.summary else "no evidence"))
        rows.append(("declared", f"provider {s.declared_provider or '-'} · model {s.declared_model or '-'}"))
        rows.append(("session", s.session_id or "?"))
        if s.parent_session_id:
            rows.append(("parent", s.parent_session_id))
        for flag, text in flag_sentences(a.flags, a.reasons):
            rows.append(("flag", Text(f"{flag}: {clean(text)}", style="red")))
        segs = segments_of(s)
        if len(segs) > 1:  # (one segment is the verdict above)
            at = segment_at(segs, ctx.item.line) if ctx.item is not None else None
            rows.extend(("segment", Text(describe_segment(segs, g), style="bold" if g is at else "")) for g in segs)
        for n in s.notes:
            rows.append(("note", Text(clean(n, 300), style="dim")))
        doc.rows(rows, indent=0)
        doc.blank()
        line = ctx.item.line if ctx.item is not None else None
        shown = [e for e in a.evidence if e.detector != "outlier"]  # (a comparison, stated with its flag above)
        doc.heading(f"Evidence records ({len(shown)})")
        if not shown:
            doc.note("No evidence: the verdict rests on the declaration, or on nothing.")
        for e in shown:
            row = Text()
            here = line is not None and e.line == line
            row.append("▸ " if here else "  ", style="bold")
            row.append(f"[{e.tag}] ", style={"verified": "green", "fleet": "cyan"}.get(e.tag, "yellow"))
            row.append(e.detector, style="cyan bold" if here else "cyan")
            row.append(f" → {_who(e.provider, e.host)}  w {e.weight:.2f}")
            where = f"line {e.line}" if e.line else "fleet"
            if e.count > 1:
                where += f" · ×{e.count}"
            row.append(f"  {where}", style="dim")
            doc.add(row)
            detail: list[tuple[str, str | Text]] = [("value", Text(clean_name(e.value, 160), style="bold"))]
            if e.field:
                detail.append(("field", clean_name(e.field, 120)))
            if e.detail:
                detail.append(("detail", Text(clean(e.detail, 800), style="italic")))
            doc.rows(detail, indent=4)
        return doc


PANES: tuple[type[DetailPane], ...] = (RawPane, IdsPane, SignaturePane, ReasoningPane, EvidencePane)
