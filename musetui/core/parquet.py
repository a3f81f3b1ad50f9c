"""Scan records as Parquet (``scan --parquet``, read by ``musetui fleet``), with the ``fleet`` extra's pyarrow.

The columns are the scan record's fields in the record's own order, with fixed types for
the known fields (so an all-null column still has its type) and pyarrow's inference for
any field this module does not know yet. Reading a file back gives the same records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from musetui.core.model import USAGE_FIELDS

EXTRA_HINT = "pip install 'musetui[fleet]'"


class MissingExtra(Exception):
    """An option needs the ``fleet`` extra (dask[distributed], pyarrow), which is not installed."""


def _pa() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet
    except ImportError as exc:
        raise MissingExtra(f"Parquet needs pyarrow, from the fleet extra: {EXTRA_HINT}") from exc
    return pa


def _known_types(pa: Any) -> dict[str, Any]:
    s, f, i = pa.string(), pa.float64(), pa.int64()
    evidence = pa.struct(
        [
            ("detector", s),
            ("provider", s),
            ("host", s),
            ("weight", f),
            ("line", i),
            ("field", s),
            ("value", s),
            ("detail", s),
        ]
    )
    types = {
        k: s
        for k in (
            "path",
            "root",
            "session_id",
            "parent_session_id",
            "format",
            "declared_provider",
            "declared_model",
            "provider",
            "host",
            "via",
            "started_at",
            "ended_at",
        )
    }
    segment = pa.struct(
        [
            ("first_line", i),
            ("last_line", i),
            ("items", i),
            ("provider", s),
            ("host", s),
            ("started_at", s),
            ("ended_at", s),
        ]
    )
    types.update(
        {"confidence": f, "items": i, "malformed_lines": i, "flags": pa.list_(s), "evidence": pa.list_(evidence)}
    )
    types["segments"] = pa.list_(segment)
    types["usage"] = pa.struct([(k, i) for k in USAGE_FIELDS])
    return types


def schema_for(records: Sequence[dict[str, Any]]) -> Any:
    """The Arrow schema of these records: every key seen, first-seen order, known fields typed."""
    pa = _pa()
    known = _known_types(pa)
    names: dict[str, None] = {}
    for r in records:
        for k in r:
            names.setdefault(k, None)
    if not names:  # no sessions: the contract's fields, so the file still describes them
        names = dict.fromkeys(known)
    fields = []
    for k in names:
        t = known.get(k)
        if t is None:
            t = pa.array([r.get(k) for r in records]).type
            if pa.types.is_null(t):
                t = pa.string()
        fields.append(pa.field(k, t))
    return pa.schema(fields)


def write_records(records: Sequence[dict[str, Any]], path: str) -> None:
    """Write scan records to a Parquet file (zstd-compressed)."""
    pa = _pa()
    import pyarrow.parquet as pq

    schema = schema_for(records)
    table = pa.Table.from_pylist([{k: r.get(k) for k in schema.names} for r in records], schema=schema)
    pq.write_table(table, path, compression="zstd")


def write_jsonl(output: bytes, path: str) -> int:
    """Write the records of ``scan --json`` output (JSON Lines bytes) to Parquet; returns how many."""
    records = [orjson.loads(line) for line in output.split(b"\n") if line.strip()]
    write_records(records, path)
    return len(records)


def read_records(path: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The scan records stored in a Parquet file (only ``columns`` of them, those present, when given)."""
    _pa()
    import pyarrow.parquet as pq

    if columns is not None:
        present = set(pq.read_schema(path).names)
        columns = [c for c in columns if c in present]
    rows: list[dict[str, Any]] = pq.read_table(path, columns=columns).to_pylist()
    return rows
