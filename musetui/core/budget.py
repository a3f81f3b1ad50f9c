"""One budget per file: what reading a file may expand to, whatever the layers.

A file is read through layers that each multiply what it holds: a ``.gz`` file expands, a
cassette's ``!!binary`` or a HAR's base64 body decodes, a gzip body inflates, its text splits into
records, YAML aliases repeat a value wherever they are named. A cap per piece (per body, per
line) lets a small file multiply past any memory through many pieces: three gzip bodies of 40 MiB
of ``{}`` lines, 20,000 aliases of one 100 KB string. So each file gets one :class:`Budget`,
created where its read starts and passed down through every layer, which charges what it expands:

===================  ===========================================================  =========
limit                what is counted                                              default
===================  ===========================================================  =========
``max_bytes``        bytes expanded (gzip file, base64, gzip body), all layers    64 MiB
``max_items``        records read out of bodies (JSON Lines, SSE, event streams)  100,000
``max_values``       YAML values, an aliased value counted at each alias          2,000,000
``max_alias_bytes``  string bytes YAML aliases add (past the file's own size)     16 MiB
``max_depth``        nesting depth of a YAML document's values                    200
===================  ===========================================================  =========

Past a limit, the layer stops expanding and keeps what it read; :attr:`Budget.tripped` names the
limit, and the file gets that diagnostic (:meth:`Budget.diagnostic`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_BYTES = 64 * 1024 * 1024
MAX_ITEMS = 100_000
MAX_VALUES = 2_000_000
MAX_ALIAS_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 200


@dataclass(slots=True)
class Budget:
    """What one file's read may still expand to (see the module's table)."""

    max_bytes: int = MAX_BYTES
    max_items: int = MAX_ITEMS
    max_values: int = MAX_VALUES
    max_alias_bytes: int = MAX_ALIAS_BYTES
    max_depth: int = MAX_DEPTH
    used_bytes: int = 0
    used_items: int = 0
    tripped: list[str] = field(default_factory=list)

    def room(self) -> int:
        """Bytes that may still be expanded."""
        return max(0, self.max_bytes - self.used_bytes)

    def charge(self, n: int) -> None:
        """Count ``n`` expanded bytes (the caller already held them to :meth:`room`)."""
        self.used_bytes += n

    def take_item(self) -> bool:
        """Count one record; False (and the budget tripped) when none is left."""
        if self.used_items >= self.max_items:
            self.trip(f"more than {self.max_items:,} records read out of bodies")
            return False
        self.used_items += 1
        return True

    def trip(self, what: str) -> None:
        """Note that a limit was reached (each reason once)."""
        if what not in self.tripped:
            self.tripped.append(what)

    def bytes_tripped(self, wanted: str) -> None:
        """Note that an expansion was cut at the byte limit."""
        self.trip(f"{wanted} past {self.max_bytes // 2**20} MiB expanded (the limit for one file)")

    def diagnostic(self) -> str | None:
        """The file's diagnostic when a limit was reached, else None."""
        if not self.tripped:
            return None
        return "read budget exceeded: " + "; ".join(self.tripped) + " (kept what was read before it)"
