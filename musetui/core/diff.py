"""Fingerprint profiles of sessions and roots, compared side by side (``musetui diff``).

A profile groups what the engine found into traits: a trait is a kind (``id layout``,
``tool-id class`` …) and a name (usually the detector), holding values with counts. Nothing
here re-reads a fingerprint by hand: the traits come from the session's scan record (verdict,
flags, evidence, segments, usage) and from its opened items, whose artifacts are decoded by
the same decoders as the scan (:meth:`musetui.core.session.OpenedSession.decoded_with_paths`) and
whose quoted input is told apart by the format's own zone probe. A root's profile counts, per
value, the sessions that show it.

Two profiles compare trait by trait: equal value sets are shared, a trait seen on one side
only is ``only_a``/``only_b``, and a trait on both sides with other values ``differ``s.
Entries are ordered by evidential weight (the verdict, then the attribution's strong
artifacts), then by kind. :mod:`musetui.core.diff_view` renders the comparison as text.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from musetui.core.fingerprints.attribution import STRENGTH_WEIGHT, TOL_AFTER_S, TOL_BEFORE_S
from musetui.core.fingerprints.types import Decoded
from musetui.core.model import Item, SessionSummary
from musetui.core.safetext import strip_controls

#: Trait kinds, in the order they are listed when their weights tie.
KINDS = (
    "verdict",
    "segments",
    "evidence",
    "id layout",
    "marker",
    "store byte",
    "signature header",
    "tool-id class",
    "reasoning kind",
    "artifact",
    "declared",
    "time offset",
    "response keys",
    "usage fields",
)
#: Weights of the traits that are not one artifact's strength (those use the attribution's
#: ``STRENGTH_WEIGHT``: strong 1.0, medium 0.6, weak 0.2).
VERDICT_WEIGHT = 3.0
SEGMENTS_WEIGHT = 2.0
REASONING_WEIGHT = STRENGTH_WEIGHT["medium"]
DECLARED_WEIGHT = 0.5
KEYS_WEIGHT = 0.4
USAGE_WEIGHT = 0.3

#: Detectors whose artifacts are ids: their shape (the OpenAI layout) is an ``id layout``.
ID_DETECTORS = frozenset(
    {
        "openai-item-id",
        "anthropic-id",
        "chatcmpl-id",
        "gemini-response-id",
        "openrouter-id",
        "uuid7",
        "ulid",
    }
)
#: Detectors of signatures and encrypted blobs: their version is a ``signature header``.
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
#: Anthropic tool-use ids (read by the ``anthropic-id`` decoder) are a ``tool-id class``.
TOOL_ID_PREFIXES = ("toolu_", "srvtoolu_")
#: Item kinds whose records are not the model's response (harness metadata, unread lines).
NOT_RESPONSE_KINDS = frozenset({"meta", "unknown"})
#: Keys whose values are tool arguments chosen by the model: their own keys are not a format's.
ARGUMENT_KEYS = frozenset({"args", "arguments", "input", "parameters"})
#: In a capture's exchange, the request body is quoted input (as the capture's scan zones it),
#: and the response is what the keys of a response are read from.
CAPTURE_QUOTED = "request.body"
CAPTURE_RESPONSE = "response."
#: At most this many key paths per record, this deep.
MAX_KEY_PATHS = 64
MAX_KEY_DEPTH = 8


@dataclass(slots=True)
class Trait:
    """One trait of a profile: its values with counts (artifacts or items in a session, sessions in a root)."""

    kind: str
    name: str
    weight: float
    values: Counter[str] = field(default_factory=Counter)


@dataclass(slots=True)
class Profile:
    """The fingerprint profile of a session or of every session under a root."""

    target: str
    scope: str  # "session" or "root"
    about: dict[str, Any] = field(default_factory=dict)
    traits: dict[tuple[str, str], Trait] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sessions: int = 1

    def add(self, kind: str, name: str, value: str, weight: float, count: int = 1) -> None:
        """Count ``value`` under the trait ``(kind, name)``; transcript text is cleaned here, once."""
        key = (kind, strip_controls(name))
        trait = self.traits.get(key)
        if trait is None:
            trait = self.traits[key] = Trait(kind, key[1], weight)
        elif weight > trait.weight:
            trait.weight = weight
        trait.values[strip_controls(value)] += count

    def note(self, text: str) -> None:
        """Add a note once."""
        if text not in self.notes:
            self.notes.append(text)


# ------------------------------------------------------------------ one session


def artifact_traits(dec: Decoded) -> list[tuple[str, str, str]]:
    """The (kind, name, value) traits of one decoded artifact, from its detector, shape and fields."""
    fields = dict(dec.fields)
    det = dec.detector
    shape = dec.shape or det
    out: list[tuple[str, str, str]] = []
    if det == "tool-id" or (det == "anthropic-id" and dec.value.startswith(TOOL_ID_PREFIXES)):
        out.append(("tool-id class", det, shape))
    elif det in ID_DETECTORS:
        out.append(("id layout", det, fields.get("layout", shape)))
    elif det in SIGNATURE_DETECTORS:
        version = fields.get("version")
        out.append(("signature header", det, f"version {version}" if version else shape))
    else:
        out.append(("artifact", det, shape))
    if "marker" in fields:
        out.append(("marker", det, fields["marker"].split(" ", 1)[0]))
    if "store byte" in fields:
        out.append(("store byte", det, fields["store byte"]))
    return out


def offset_class(delta: float) -> str:
    """The class of a decoded time's offset from its line's time, on the attribution's tolerances."""
    if abs(delta) < 1:
        return "0 s"
    if delta > 0:
        return f"after, ≤ {TOL_AFTER_S:.0f} s" if delta <= TOL_AFTER_S else f"after, > {TOL_AFTER_S:.0f} s"
    if delta >= -60:
        return "before, ≤ 1 min"
    return (
        f"before, ≤ {TOL_BEFORE_S / 60:.0f} min" if delta >= -TOL_BEFORE_S else f"before, > {TOL_BEFORE_S / 60:.0f} min"
    )


def key_paths(obj: Any, prefix: str = "", depth: int = 0) -> Iterator[str]:
    """The leaf key paths of a record (``payload.event.signature``; a list's members as ``[]``).

    Tool arguments are not descended into: their keys are the model's choice, not the format's.
    """
    if depth > MAX_KEY_DEPTH:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            if k in ARGUMENT_KEYS or not isinstance(v, dict | list) or not v:
                yield path
            else:
                yield from key_paths(v, path, depth + 1)
    elif isinstance(obj, list):
        for member in obj:
            if isinstance(member, dict | list):
                yield from key_paths(member, f"{prefix}[]", depth + 1)


def _record_keys(item: Item) -> set[str]:
    """The key paths of an item's record(s), at most :data:`MAX_KEY_PATHS`."""
    out: set[str] = set()
    for obj in item.raw if isinstance(item.raw, list) else [item.raw]:
        for path in key_paths(obj):
            out.add(path)
            if len(out) >= MAX_KEY_PATHS:
                return out
    return out


def usage_field(path: str) -> str | None:
    """The usage field a key path names (``input_tokens`` of ``payload.info.total_token_usage.input_tokens``)."""
    parts = path.replace("[]", "").split(".")
    for i in range(len(parts) - 2, -1, -1):
        if "usage" in parts[i].lower():
            return ".".join(parts[i + 1 :])
    return None


def _record_traits(profile: Profile, summary: SessionSummary, rec: dict[str, Any]) -> None:
    """Verdict, declaration, evidence, segments and usage: what the scan record says."""
    add = profile.add
    add("verdict", "provider", rec.get("provider") or "unknown", VERDICT_WEIGHT)
    add("verdict", "host", rec.get("host") or "none", VERDICT_WEIGHT)
    if rec.get("via"):
        add("verdict", "via", rec["via"], VERDICT_WEIGHT)
    for flag in rec.get("flags") or ["none"]:
        add("verdict", "flags", flag, VERDICT_WEIGHT)
    add(
        "verdict",
        "confidence",
        confidence_band(float(rec.get("confidence") or 0.0)),
        VERDICT_WEIGHT,
    )
    add("declared", "format", summary.format, DECLARED_WEIGHT)
    add("declared", "provider", rec.get("declared_provider") or "none", DECLARED_WEIGHT)
    models = summary.models or ({rec["declared_model"]: 1} if rec.get("declared_model") else {"none": 1})
    for model, n in models.items():
        add("declared", "model", model, DECLARED_WEIGHT, n)
    for ev in rec.get("evidence") or []:
        if ev.get("detector") in (None, "outlier"):
            continue
        who = ev.get("provider") or "no provider"
        who += f"/{ev['host']}" if ev.get("host") else ""
        add("evidence", ev["detector"], who, float(ev.get("weight") or 0.0))
    segments = rec.get("segments")
    if isinstance(segments, list) and segments:
        runs = [f"{s.get('provider') or 'unknown'}{'/' + s['host'] if s.get('host') else ''}" for s in segments]
        add("segments", "runs", " → ".join(runs), SEGMENTS_WEIGHT)
        add("segments", "switches", str(len(segments) - 1), SEGMENTS_WEIGHT)
    elif segments is None:
        profile.note("segments: not in the scan record (this musetui does not record them)")
    usage = rec.get("usage")
    if isinstance(usage, dict):
        for name, value in usage.items():
            if value is not None:
                add("usage fields", "scan record", name, USAGE_WEIGHT)


def confidence_band(confidence: float) -> str:
    """``high`` (≥ 0.9), ``medium`` (≥ 0.5: strong artifacts, or a declaration alone) or ``low``."""
    if confidence >= 0.9:
        return "high (≥ 0.9)"
    return "medium (≥ 0.5)" if confidence >= 0.5 else "low (< 0.5)"


def _item_traits(profile: Profile, opened: Any) -> None:
    """Decoded artifacts, reasoning kinds, response key sets, usage fields and time offsets of the items.

    Artifacts count once per session (the first time a value is seen, as the attribution
    counts them), and only outside quoted input (the format's zone probe, as the scan decides).
    """
    from musetui.core.sources.base import ZONE_MODEL
    from musetui.core.sources.registry import is_capture, probe_for

    probe = probe_for(opened.summary.format)
    capture = is_capture(opened.summary.format)
    seen: set[str] = set()
    # counted here, then added to the profile once each (cleaning text once per distinct value)
    tally: dict[tuple[str, str, str], list[float]] = {}

    def add(kind: str, name: str, value: str, weight: float) -> None:
        got = tally.get((kind, name, value))
        if got is None:
            tally[(kind, name, value)] = [1, weight]
        else:
            got[0] += 1
            got[1] = max(got[1], weight)

    for item in opened.items:
        if item.reasoning:
            add("reasoning kind", "reasoning", item.reasoning, REASONING_WEIGHT)
        try:
            quoted = probe.zone(opened.raw(item)) != ZONE_MODEL
        except Exception:  # a probe that cannot read the line: treat it as model output
            quoted = False
        if quoted:
            continue
        for dec, path in opened.decoded_with_paths(item):
            if dec.value in seen or (capture and path.startswith(CAPTURE_QUOTED)):
                continue
            seen.add(dec.value)
            weight = STRENGTH_WEIGHT.get(dec.strength, STRENGTH_WEIGHT["weak"])
            for kind, name, value in artifact_traits(dec):
                add(kind, name, value, weight)
            if dec.time is not None and item.time is not None:
                add("time offset", dec.detector, offset_class(dec.time - item.time), weight)
        if item.kind in NOT_RESPONSE_KINDS:
            continue
        name = f"{item.kind}:{item.subkind}" if item.subkind else item.kind
        for path in sorted(_record_keys(item)):
            if capture and not path.startswith(CAPTURE_RESPONSE):
                continue
            add("response keys", name, path, KEYS_WEIGHT)
            used = usage_field(path)
            if used:
                add("usage fields", "in records", used, USAGE_WEIGHT)
    for (kind, name, value), (count, weight) in tally.items():
        profile.add(kind, name, value, weight, int(count))


def session_profile(summary: SessionSummary, opened: Any, target: str = "") -> Profile:
    """The fingerprint profile of one session, from its summary and its opened items.

    Args:
        summary: the session as the index reports it (its scan record is the verdict's truth).
        opened: the session's :class:`musetui.core.session.OpenedSession`.
        target: how the session was named (a path or ``ROOT:ID``), for the views.
    """
    rec = summary.record()
    profile = Profile(target or summary.abspath, "session")
    profile.about = {
        "target": target or summary.abspath,
        "scope": "session",
        "sessions": 1,
        "root": rec.get("root"),
        "path": rec.get("path"),
        "session_id": summary.session_id,
        "format": summary.format,
        "provider": rec.get("provider"),
        "host": rec.get("host"),
        "confidence": rec.get("confidence"),
        "flags": list(rec.get("flags") or []),
    }
    _record_traits(profile, summary, rec)
    _item_traits(profile, opened)
    for diag in getattr(opened, "diagnostics", []):
        profile.note(f"{diag.path}: {diag.message}")
    profile.about["notes"] = profile.notes
    return profile


def root_profile(root: str, sessions: Sequence[SessionSummary], target: str = "") -> Profile:
    """The profile of every session under a root: each value counts the sessions that show it.

    Sessions are opened one at a time (nothing holds the whole tree); one that cannot be
    opened becomes a note, and the others still count.
    """
    from musetui.core.session import open_session

    profile = Profile(target or root, "root", sessions=0)
    providers: Counter[str] = Counter()
    for summary in sorted(sessions, key=lambda s: (s.path, s.root)):
        try:
            one = session_profile(summary, open_session(summary))
        except Exception as exc:
            profile.note(f"{summary.path}: not profiled ({type(exc).__name__}: {exc})")
            continue
        profile.sessions += 1
        providers[summary.attribution.provider] += 1
        for trait in one.traits.values():
            for value in trait.values:
                profile.add(trait.kind, trait.name, value, trait.weight)
        for note in one.notes:
            profile.note(note if note.startswith("segments:") else f"{summary.path}: {note}")
    profile.about = {
        "target": target or root,
        "scope": "root",
        "sessions": profile.sessions,
        "root": root,
        "providers": dict(providers.most_common()),
        "notes": profile.notes,
    }
    return profile


# ------------------------------------------------------------------ comparison


@dataclass(slots=True)
class Entry:
    """One trait in a comparison: its values on each side (None on the side that lacks it)."""

    kind: str
    name: str
    weight: float
    a: dict[str, int] | None
    b: dict[str, int] | None

    def record(self) -> dict[str, Any]:
        """The JSON form: ``{kind, trait, weight, a, b}``."""
        return {
            "kind": self.kind,
            "trait": self.name,
            "weight": round(self.weight, 3),
            "a": self.a,
            "b": self.b,
        }


@dataclass(slots=True)
class Comparison:
    """Two profiles, trait by trait."""

    a: Profile
    b: Profile
    shared: list[Entry] = field(default_factory=list)
    only_a: list[Entry] = field(default_factory=list)
    only_b: list[Entry] = field(default_factory=list)
    differ: list[Entry] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """The ``diff --json`` object: ``{a, b, shared, only_a, only_b, differ}``."""
        return {
            "a": self.a.about,
            "b": self.b.about,
            "shared": [e.record() for e in self.shared],
            "only_a": [e.record() for e in self.only_a],
            "only_b": [e.record() for e in self.only_b],
            "differ": [e.record() for e in self.differ],
        }


#: The verdict's traits in the order a reader asks about them.
VERDICT_ORDER = ("provider", "host", "via", "flags", "confidence")


def _order(entry: Entry) -> tuple[float, int, int, str]:
    kind = KINDS.index(entry.kind) if entry.kind in KINDS else len(KINDS)
    name = VERDICT_ORDER.index(entry.name) if entry.kind == "verdict" and entry.name in VERDICT_ORDER else 0
    return (-entry.weight, kind, name, entry.name)


def _counts(trait: Trait) -> dict[str, int]:
    return dict(sorted(trait.values.items(), key=lambda kv: (-kv[1], kv[0])))


def compare(a: Profile, b: Profile) -> Comparison:
    """Shared traits, traits of one side only, and traits whose values differ; heaviest first."""
    out = Comparison(a, b)
    for key in a.traits.keys() | b.traits.keys():
        ta, tb = a.traits.get(key), b.traits.get(key)
        weight = max(t.weight for t in (ta, tb) if t is not None)
        entry = Entry(key[0], key[1], weight, _counts(ta) if ta else None, _counts(tb) if tb else None)
        if ta is None:
            out.only_b.append(entry)
        elif tb is None:
            out.only_a.append(entry)
        elif set(ta.values) == set(tb.values):
            out.shared.append(entry)
        else:
            out.differ.append(entry)
    for entries in (out.shared, out.only_a, out.only_b, out.differ):
        entries.sort(key=_order)
    return out


# ------------------------------------------------------------------ naming what to compare


class TargetError(ValueError):
    """A target that names no session or root: one line for the user."""


def load_profiles(a: str, b: str, roots: Sequence[str], *, use_cache: bool = True) -> tuple[Profile, Profile]:
    """The profiles two targets name (see :func:`resolve`): two sessions or two roots, never one of each."""
    first = resolve(a, roots, use_cache=use_cache)
    second = resolve(b, roots, use_cache=use_cache)
    if first[0] != second[0]:
        raise TargetError(f"A is a {first[0]} and B a {second[0]}: compare two sessions or two roots")
    return _profile(a, first, use_cache), _profile(b, second, use_cache)


def _profile(target: str, resolved: tuple[str, str, SessionSummary | None], use_cache: bool) -> Profile:
    from musetui.core.session import open_session

    _scope, root, summary = resolved
    if summary is not None:
        return session_profile(summary, open_session(summary), target)
    from musetui.core.index import Index

    index = Index([root], use_cache=use_cache).scan()
    if not index.sessions:
        raise TargetError(f"no transcripts found under {target}")
    return root_profile(root, index.sessions, target)


def resolve(target: str, roots: Sequence[str], *, use_cache: bool = True) -> tuple[str, str, SessionSummary | None]:
    """What a target names: ``("root", dir, None)`` or ``("session", root, summary)``.

    A target is, in this order: an existing directory (a root: every session under it); an
    existing file (that session, indexed with its family, as ``show`` reports it);
    ``ROOT:ID`` (the session with that id under the directory ROOT); or a bare ``ID``,
    looked up under ``roots``. An id matches a session id, a Muse session directory's name,
    or, when nothing matches exactly, the start of exactly one session id.
    """
    from musetui.core.diagnostics import resolve_cli_path

    path = resolve_cli_path(target)
    if os.path.isdir(path):
        return "root", os.path.abspath(path), None
    if os.path.lexists(path):
        from musetui.core.report import show_summary

        summary, _diags = show_summary(os.path.abspath(path), use_cache=use_cache)
        if summary is None:
            raise TargetError(f"{target} holds no transcript records")
        return "session", summary.root, summary
    if ":" in target:
        root, ident = target.rsplit(":", 1)
        root = resolve_cli_path(root)
        if not os.path.isdir(root):
            raise TargetError(f"{target}: {root} is not a directory (ROOT:ID needs a transcript tree)")
        where = [root]
    else:
        ident, where = target, list(roots)
        if not where:
            raise TargetError(f"no such file or directory, nor a root to look the id up in: {target} (give --root DIR)")
    summary = find_session(where, ident, use_cache=use_cache)
    return "session", summary.root, summary


def find_session(roots: Sequence[str], ident: str, *, use_cache: bool = True) -> SessionSummary:
    """The one session under ``roots`` that ``ident`` names (see :func:`resolve`)."""
    from musetui.core.index import Index

    if not ident:
        raise TargetError("an empty session id")
    sessions = Index(list(roots), use_cache=use_cache).scan().sessions
    found = [s for s in sessions if ident in (s.session_id, s.muse_dir_id)]
    if not found and len(ident) >= 4:
        found = [s for s in sessions if (s.session_id or "").startswith(ident)]
    where = ", ".join(roots)
    if not found:
        raise TargetError(f"no session {ident} under {where}")
    if len({s.abspath for s in found}) > 1:
        raise TargetError(f"{ident} names {len(found)} sessions under {where}: give the file's path")
    return found[0]
