"""A light summary's scan record, packed: raw deflate against a preset dictionary of what records share.

A scan record of a small session is about 500 bytes of JSON, most of it keys and common
values; packed against :data:`RECORD_DICT` (a record's skeleton) it takes about 60. An index
of 100,000 sessions holds them all at once (fleet outliers need every verdict before the
first record is written), so this is most of what a light session costs. Packing is only
in memory, within one process: nothing packed is stored or sent.

Deflate costs ~35 µs a record (most of it setting up the dictionary), and for a scan of a few
thousand sessions that is the parent's largest cost. So a process keeps the first
:data:`PLAIN_BYTES` of record text it holds plain, and packs only past them: memory stays
bounded (at most that much more than packing all), and a scan of up to ~20,000 sessions
(the 500 MB bench corpus) packs none.
"""

from __future__ import annotations

import zlib

__all__ = ["PLAIN_BYTES", "RECORD_DICT", "pack_record", "unpack_record"]

#: Record text a process holds plain before it starts packing (bytes; never refilled).
PLAIN_BYTES = 48 << 20
_plain_left = PLAIN_BYTES
#: The first byte of a packed record (a plain one is JSON text: an object, so ``{``).
_PACKED = b"\x00"

#: What scan records share, most common last (deflate reaches nearer bytes with shorter codes).
RECORD_DICT = (
    b'"detail":"OpenAI Responses response id (new50) minted Z, marker store byte 00 Anthropic message id '
    b'holding UUIDv7 , minted s from line [verified] (docs/fingerprints.md#","detector":"'
    b'{"detector":"declared","provider":"openai","host":"azure","weight":0.5,"line":1,"field":"model",'
    b'"value":"gpt-5","detail":"declared model"},'
    b'"format":"claude-code","format":"codex","format":"muse","format":"openai-responses",'
    b'"provider":"anthropic","provider":"meta","provider":"unknown","declared_provider":"openai",'
    b'"declared_model":"claude-sonnet-4-6","declared_model":"avocado-1.3","confidence":0.99,'
    b'"started_at":"2026-09-01T22:40:02.553Z","ended_at":"2026-09-01T22:41:11.699Z",'
    b'{"root":"","path":"","session_id":null,"parent_session_id":null,"format":"generic",'
    b'"declared_provider":null,"declared_model":"gpt-4o","provider":"openai","host":null,"via":null,'
    b'"confidence":0.5,"flags":[],"evidence":[],"items":1,"malformed_lines":0,"started_at":null,'
    b'"ended_at":null,"segments":[{"first_line":1,"last_line":1,"items":1,"provider":"openai",'
    b'"host":null,"started_at":null,"ended_at":null}],"usage":{"input":null,"output":null,'
    b'"cached":null,"reasoning":null}}\n'
)


def pack_record(text: bytes) -> bytes:
    """``text`` (a record's JSON) as held: itself while :data:`PLAIN_BYTES` last, else packed.

    :func:`unpack_record` gives it back byte for byte.
    """
    global _plain_left
    if text[:1] == b"{" and len(text) <= _plain_left:
        _plain_left -= len(text)
        return text
    z = zlib.compressobj(3, zlib.DEFLATED, -15, 4, zdict=RECORD_DICT)
    return _PACKED + z.compress(text) + z.flush()


def unpack_record(packed: bytes) -> bytes:
    """The JSON text :func:`pack_record` held (packed or not)."""
    if packed[:1] != _PACKED:
        return packed
    d = zlib.decompressobj(-15, zdict=RECORD_DICT)
    return d.decompress(packed[1:]) + d.flush()
