"""The studies of the results report, one module each (its row selection, its numbers and its Markdown).

Every study module has ``sections(t: Tables) -> list[str]`` (``readme`` writes the README's blocks instead, and
``written`` gives the hand-written parts), reading the
:class:`~gcc_sgcl.experiments.studies.selection.Tables` and writing its CSV and figures beside the rows;
:data:`gcc_sgcl.experiments.report.STUDIES` lists them in the report's order. :mod:`.cells` (rows, cells, grids,
tests) and :mod:`.markdown` (tables, figures, labels) are the vocabulary they share; :mod:`.selection` decides which
rows are the tables'.
"""
