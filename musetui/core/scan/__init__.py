"""The scanner's stages, each a module with one typed entry point (see :mod:`musetui.core.scan.stages`).

A window of a file (the whole file, or a slice of a large one) goes through them in order:

1. :mod:`~musetui.core.scan.windows`: the window's lines and their offsets;
2. :mod:`~musetui.core.scan.validate`: which lines are JSON records, and why the others are not;
3. :mod:`~musetui.core.scan.observe`: the format, from the first records (sniff), then what each
   record tells the summary (observe);
4. :mod:`~musetui.core.scan.evidence`: the fingerprints in the window's bytes, located and zoned;
5. :mod:`~musetui.core.scan.conclude`: the summary finished and attributed, once, after the last window.

:mod:`musetui.core.scanner` reads the files and drives the stages.
"""
