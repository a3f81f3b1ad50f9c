"""Fast pickling for the slotted dataclasses that worker processes send through their pipes.

Only between processes of one musetui: the persistent cache stores plain data, never a
pickle (see :mod:`musetui.core.cache_codec`).
"""

from __future__ import annotations

from typing import Any


def reduce_by_fields(self: Any) -> tuple[Any, tuple[Any, ...]]:
    """A ``__reduce__`` for slotted dataclasses: the class and its field values, in order.

    Unpickling then calls the class once with positional arguments. That is about 2.5x
    faster than the default for slotted dataclasses, which runs a Python ``__setstate__``
    per object, and it is most of the time of a warm TUI reopen (one outcome per file).
    Every field must be an ``__init__`` parameter, in declaration order (the default).
    """
    return (type(self), tuple(getattr(self, name) for name in self.__slots__))
