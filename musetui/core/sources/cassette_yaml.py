"""Loading a cassette's YAML: fast where it is safe, never executing what a tag names.

PyYAML's libyaml loader (``CSafeLoader``) reads cassettes about 25 times faster than its
pure-Python one, with the same constructors, so into the same values. But libyaml's composer
recurses in C once per nesting level, and hostile nesting overflows the stack (a segfault that
would end the scan), where the Python loader raises ``RecursionError``, which is reported as a
diagnostic. So the depth is measured first, from libyaml's event stream (produced without
recursion), and a deep or invalid document goes to the pure-Python loader, whose error and line
are the ones reported.

Cassettes recorded through aiohttp carry Python tags: vcrpy writes each header name as
``!!python/object/apply:multidict._multidict.istr [Accept]``. A safe loader refuses them, which
made such a cassette unreadable. Both loaders here build any ``!!python/…`` tag as the plain data
written under it (a one-argument ``apply`` or ``new`` as its argument, so ``istr`` header names are
strings again). Nothing is imported or called: the tag is only a name.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import yaml
from yaml.events import CollectionEndEvent, CollectionStartEvent

#: YAML nested deeper than this is loaded by the pure-Python loader. Real cassettes nest about 16 deep.
C_YAML_MAX_DEPTH = 200

_PYTHON_TAG = "tag:yaml.org,2002:python/"
_RUBY_TAG = "!ruby/"


def _python_tag_as_data(loader: Any, suffix: str, node: yaml.Node) -> Any:
    """The data under a ``!!python/…`` (or ``!ruby/…``) tag, as if the tag were not there."""
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        values = loader.construct_sequence(node, deep=True)
        if suffix.startswith(("object/apply:", "object/new:")) and len(values) == 1 and isinstance(values[0], str):
            return values[0]
        return values
    return loader.construct_mapping(node, deep=True)


@cache
def loaders() -> tuple[type[Any] | None, type[Any]]:
    """The libyaml loader (None without libyaml) and the pure-Python one, both tag-tolerant."""

    class PythonLoader(yaml.SafeLoader):
        pass

    _tolerate(PythonLoader)
    base = getattr(yaml, "CSafeLoader", None)
    if base is None:
        return None, PythonLoader

    class CLoader(base):  # type: ignore[misc, valid-type]
        pass

    _tolerate(CLoader)
    return CLoader, PythonLoader


def _tolerate(loader: Any) -> None:
    """Teach a safe loader the tags cassettes carry, as plain data: Python's, and Ruby's (VCR's gem).

    Ruby's Psych writes a body that is not valid UTF-8 as ``!binary`` (base64, as YAML's own
    ``!!binary``), and objects as ``!ruby/…``.
    """
    loader.add_multi_constructor(_PYTHON_TAG, _python_tag_as_data)
    loader.add_multi_constructor(_RUBY_TAG, _python_tag_as_data)
    loader.add_constructor("!binary", yaml.SafeLoader.construct_yaml_binary)


def load_yaml(data: bytes) -> Any:
    """The YAML document of ``data``, through libyaml when it is there and the nesting is shallow.

    Raises what the pure-Python loader raises on ``data`` (``yaml.YAMLError``, ``RecursionError`` …).
    """
    fast, python = loaders()
    if fast is not None and depth_within(data, fast, C_YAML_MAX_DEPTH):
        try:
            return yaml.load(data, Loader=fast)
        except yaml.YAMLError:
            pass  # a composer or constructor error: reported as the pure-Python loader words it
    return yaml.load(data, Loader=python)


def depth_within(data: bytes, loader: Any, limit: int) -> bool:
    """Whether ``data`` parses as YAML with collections nested at most ``limit`` deep."""
    depth = 0
    try:
        for event in yaml.parse(data, Loader=loader):
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > limit:
                    return False
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return False
    return True
