"""A scanned file's summary carries its identity as read: path, root, size, times, inode, device."""

from __future__ import annotations

import os
from pathlib import Path

from musetui.core import scanner

LINE = (
    b'{"stream":{"kind":"session","id":"s-1"},"recorded_at":1788630410730227,'
    b'"payload":{"kind":"metadata","record":{"provider_id":"meta","model_id":"avocado-1.2"}}}\n'
)


def test_summary_identity_fields(tmp_path: Path) -> None:
    f = tmp_path / "session.jsonl"
    f.write_bytes(LINE * 3)
    st = os.stat(f)
    out = scanner.scan_file(str(f), "session.jsonl", str(tmp_path))
    s = out.summary
    assert s is not None and out.diagnostics == []
    assert (s.path, s.abspath, s.root, s.format) == ("session.jsonl", str(f), str(tmp_path), "muse")
    assert (s.size, s.mtime_ns, s.inode, s.device, s.read_bytes) == (
        st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, st.st_size,
    )  # fmt: skip
    assert (s.session_id, s.declared_provider, s.declared_model, s.items) == ("s-1", "meta", "avocado-1.2", 3)
    assert s.malformed == [] and s.malformed_lines == 0 and s.parent_session_id is None


def test_blank_file_is_empty_and_bom_file_is_not_utf8(tmp_path: Path) -> None:
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b" \n\t\r\n\x0b\x0c\n")
    out = scanner.scan_file(str(blank), "blank.jsonl", str(tmp_path))
    assert out.summary is None and [d.message for d in out.diagnostics] == ["empty file: no records"]
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes("\ufeff{}".encode("utf-16"))
    out = scanner.scan_file(str(bom), "bom.jsonl", str(tmp_path))
    assert out.summary is None and "UTF-16 text (BOM)" in out.diagnostics[0].message
    nul = tmp_path / "nul.jsonl"
    nul.write_bytes(b"\x00\x01\x02\n")
    out = scanner.scan_file(str(nul), "nul.jsonl", str(tmp_path))
    assert out.summary is None and out.diagnostics[-1].message.startswith("binary file:")
