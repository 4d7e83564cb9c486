"""Readers for the benchmark text formats; every malformed line raises a :class:`DataFormatError`.

Readers return plain arrays (or graphs built with :func:`simple_undirected_graph`); choosing files and
labels per dataset is :mod:`gcc_sgcl.data.registry`'s job.
"""
from __future__ import annotations

import itertools
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import dgl
import numpy as np

from gcc_sgcl.data.graphs import simple_undirected_graph
from gcc_sgcl.data.text import DataFormatError, LineReader, damage, open_text, quoted, source_name, split_fields

# Edge lists are converted to numpy in chunks so huge files (LiveJournal) never hold Python ints for all rows.
_CHUNK = 1 << 20
SPARE_NODES = 1_000_000
"""Nodes a graph may have beyond twice its edge count (isolated ones) when a header or an id sets the node count:
more means a wrong header (or ids that are labels, not positions), and would allocate that many nodes."""
MAX_NODES = 2**31  # simple_undirected_graph keys each edge as src * n + dst, which must fit an int64


def node_count_limit(edges: int) -> int:
    """The most nodes a graph of ``edges`` edges may be declared with (see :data:`SPARE_NODES`)."""
    return min(2 * edges + SPARE_NODES, MAX_NODES)


def read_rows(count: int, read_row: Callable[[], tuple[int, int]]) -> np.ndarray:
    """``(count, 2)`` int64 rows from ``count`` calls of ``read_row``, allocated a chunk at a time: a header that
    declares more rows than its file holds ends in ``read_row``'s error at the end of the file, not in an
    allocation of the declared size."""
    chunks = []
    for start in range(0, count, _CHUNK):
        chunk = np.empty((min(_CHUNK, count - start), 2), dtype=np.int64)
        for i in range(len(chunk)):
            chunk[i] = read_row()
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks or [np.empty((0, 2), dtype=np.int64)])


def find_zip_member(path: Path, basename: str) -> str:
    """The member of zip ``path`` whose file name is ``basename`` (macOS ``__MACOSX`` copies ignored)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist()
                     if n.rsplit("/", 1)[-1] == basename and not n.startswith("__MACOSX")]
    except zipfile.BadZipFile as error:
        raise DataFormatError(f"{path}: {damage(error)}") from error
    if len(names) != 1:
        found = "none" if not names else ", ".join(names)
        raise DataFormatError(f"{path}: expected exactly one zip member named {basename!r}, found {found}")
    return names[0]


def read_gin_graphs(path: Path, member: str | None = None) -> tuple[list[dgl.DGLGraph], np.ndarray]:
    """Graphs and raw labels from the GIN/DGCNN text format (``NAME.txt``).

    Line 1: number of graphs ``N``; per graph a line ``n label``, then ``n`` node lines
    ``tag m nb_1 ... nb_m`` with 0-based neighbour ids inside the graph. Tokens after the ``m``
    neighbours (continuous node attributes in some datasets) are ignored, as are the tags.
    """
    with open_text(path, member) as f:
        r = LineReader(f, source_name(path, member))
        (num_graphs,) = r.ints(r.next("the number of graphs"), "the number of graphs", count=1)
        if num_graphs < 0:
            raise r.error(f"negative number of graphs {num_graphs}")
        graphs, labels = [], []  # lists, not arrays of the declared sizes: the header may claim more than is there
        for i in range(num_graphs):
            n, label = r.ints(r.next(f"'n label' of graph {i}"), "'n label'", count=2)
            labels.append(label)
            if n < 0:
                raise r.error(f"negative node count {n}")
            degrees, neighbours = [], []
            for v in range(n):
                tokens = r.next(f"node line {v} of {n} of graph {i} ('tag m neighbours...')")
                if len(tokens) < 2:
                    raise r.error(f"expected 'tag m neighbours...', got {quoted(tokens)}")
                m = r.ints(tokens[1:2], "an integer neighbour count m")[0]
                if m < 0 or len(tokens) < 2 + m:
                    raise r.error(f"node declares {m} neighbours but the line lists {len(tokens) - 2}")
                nbrs = r.ints(tokens[2 : 2 + m], "integer neighbour ids")
                if nbrs and (min(nbrs) < 0 or max(nbrs) >= n):
                    raise r.error(f"neighbour id out of range [0, {n}) in graph {i}")
                degrees.append(m)
                neighbours.extend(nbrs)
            src = np.repeat(np.arange(n, dtype=np.int64), np.asarray(degrees, dtype=np.int64))
            graphs.append(simple_undirected_graph(src, np.asarray(neighbours, dtype=np.int64), n))
        r.expect_end(f"{num_graphs} graphs")
    return graphs, np.asarray(labels, dtype=np.int64)


def _read_int_column(path: Path, member: str, expected: str, valid: range | None = None) -> np.ndarray:
    with open_text(path, member) as f:
        r = LineReader(f, source_name(path, member))
        values = []
        for tokens in r:
            (value,) = r.ints(tokens, expected, count=1)
            if valid is not None and value not in valid:
                raise r.error(f"{value} out of range [{valid.start}, {valid.stop - 1}]")
            values.append(value)
    return np.asarray(values, dtype=np.int64)


def tu_name(path: Path) -> str:
    """The dataset name ``NAME`` of a TU directory or zip, from its one ``NAME_A.txt`` file."""
    if path.is_dir():
        names = sorted(p.name for p in path.glob("*_A.txt"))
    else:
        with zipfile.ZipFile(path) as archive:
            names = sorted({n.rsplit("/", 1)[-1] for n in archive.namelist()
                            if n.endswith("_A.txt") and not n.startswith("__MACOSX")})
    if len(names) != 1:
        found = "none" if not names else ", ".join(names)
        raise DataFormatError(f"{path}: expected one TU adjacency file NAME_A.txt, found {found}")
    return names[0][: -len("_A.txt")]


def _tu_file(path: Path, basename: str) -> tuple[Path, str | None]:
    """``(file, zip member or None)`` holding ``basename`` in a TU directory or zip."""
    if path.is_dir():
        if not (path / basename).is_file():
            raise DataFormatError(f"{path}: TU directory has no {basename}")
        return path / basename, None
    return path, find_zip_member(path, basename)


def read_tu_graphs(path: Path, name: str) -> tuple[list[dgl.DGLGraph], np.ndarray]:
    """Graphs and raw labels from a TU-format zip or directory (``NAME_A.txt``, ``NAME_graph_indicator.txt``,
    ``NAME_graph_labels.txt``; 1-based node and graph ids, ``A`` rows ``u, v``)."""
    labels = _read_int_column(*_tu_file(path, f"{name}_graph_labels.txt"), "one integer graph label")
    valid_graph_ids = range(1, labels.size + 1)
    indicator = _read_int_column(*_tu_file(path, f"{name}_graph_indicator.txt"), "one integer graph id",
                                 valid_graph_ids) - 1
    a_path, a_member = _tu_file(path, f"{name}_A.txt")
    edges = read_edge_list(a_path, a_member, comments=(), sep=",") - 1
    outside = np.flatnonzero(((edges < 0) | (edges >= indicator.size)).any(axis=1))
    if outside.size:
        raise _error_at_row(a_path, a_member, int(outside[0]), f"node id out of range [1, {indicator.size}]",
                            sep=",")
    graph_u, graph_v = indicator[edges[:, 0]], indicator[edges[:, 1]]
    across = np.flatnonzero(graph_u != graph_v)
    if across.size:
        row = int(across[0])
        message = f"edge joins graphs {graph_u[row] + 1} and {graph_v[row] + 1}"
        raise _error_at_row(a_path, a_member, row, message, sep=",")
    sizes = np.bincount(indicator, minlength=labels.size)
    order = np.argsort(indicator, kind="stable")
    local = np.empty_like(indicator)
    local[order] = np.arange(indicator.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    by_graph = np.argsort(graph_u, kind="stable")
    splits = np.cumsum(np.bincount(graph_u, minlength=labels.size))[:-1]
    graphs = [
        simple_undirected_graph(local[e[:, 0]], local[e[:, 1]], int(n))
        for e, n in zip(np.split(edges[by_graph], splits), sizes)
    ]
    return graphs, labels


def read_edge_list(
    path: Path, member: str | None = None, comments: tuple[str, ...] = ("#",), sep: str | None = None
) -> np.ndarray:
    """``(k, 2)`` int64 raw ids from lines ``u v`` (whitespace separated unless ``sep``; ``comments`` skipped)."""
    with open_text(path, member) as f:
        r = LineReader(f, source_name(path, member), comments=comments, sep=sep)
        chunks, flat = [], []
        for tokens in r:
            flat.extend(r.ints(tokens, "two integer node ids", count=2))
            if len(flat) >= _CHUNK:
                chunks.append(np.asarray(flat, dtype=np.int64))
                flat = []
        chunks.append(np.asarray(flat, dtype=np.int64))
    return np.concatenate(chunks).reshape(-1, 2)


def id_values(tokens: list[str]) -> np.ndarray:
    """Id tokens as an array: int64 when every token is an integer written as Python writes it, else str (ids
    kept as written, so ``"01"`` and ``"1"`` stay two ids).

    >>> id_values(["3", "-1"]).tolist(), id_values(["3", "x"]).tolist(), id_values(["01", "1"]).tolist()
    ([3, -1], ['3', 'x'], ['01', '1'])
    """
    values = np.asarray(tokens, dtype=str)
    try:
        ints = values.astype(np.int64)
    except (ValueError, OverflowError):
        return values
    return ints if np.array_equal(ints.astype(str), values) else values


def is_number(token: str) -> bool:
    """Whether ``token`` reads as a number in any spelling (``1``, ``01``, ``1.0``, ``-2e3``): never a header.

    >>> is_number("01"), is_number("1.5"), is_number("source")
    (True, True, False)
    """
    try:
        float(token)
    except ValueError:
        return False
    return True


def read_id_edge_list(path: Path) -> np.ndarray:
    """``(k, 2)`` raw node ids of an edge list whose ids are integers or arbitrary strings (see
    :func:`id_values`): one edge ``u v`` per line, fields separated by whitespace and/or commas, further
    columns (weights, times) ignored, lines starting with ``#`` or ``%`` skipped; plain or ``.gz``. The first
    line is a header (``source,target``), and skipped, when its two ids are not numbers and all the others are
    integers; with string ids a header cannot be told from an edge, so it must be a comment. A file whose one line
    holds two non-numbers is a header without data, and refused."""
    with open_text(path) as f:
        r = LineReader(f, str(path), comments=("#", "%"), split=split_fields)
        tokens = []
        for fields in r:
            if len(fields) < 2:
                raise r.error(f"expected an edge 'u v' (two node ids, then optional columns), got {quoted(fields)}")
            tokens += fields[:2]
    if not tokens:
        raise DataFormatError(f"{path}: no edges; expected lines 'u v' (two node ids each)")
    if len(tokens) == 2 and not any(map(is_number, tokens)):  # a header and no edge (a one-edge graph means nothing)
        raise DataFormatError(f"{path}: only the line {quoted(tokens)}, a header without any edge after it; "
                              f"expected lines 'u v' (two node ids each)")
    header = len(tokens) > 2 and not any(map(is_number, tokens[:2]))
    ids = id_values(tokens[2:] if header else tokens)
    if header and not np.issubdtype(ids.dtype, np.integer):  # string ids: the first line is an edge
        ids = np.asarray(tokens, dtype=str)
    return ids.reshape(-1, 2)


def read_two_columns(path: Path, expected: str, second_optional: bool = False) -> Iterator[tuple[str, str, LineReader]]:
    """``(first, second, reader)`` for each line of a two-column file (fields separated by whitespace and/or
    commas; ``#``/``%`` comments); ``reader`` locates errors at the current line. With ``second_optional`` a line of
    one field gives ``""`` as its second (a labels file's ``node,``: a missing label)."""
    with open_text(path) as f:
        r = LineReader(f, str(path), comments=("#", "%"), split=split_fields)
        for fields in r:
            if second_optional and len(fields) == 1:
                fields = [fields[0], ""]
            if len(fields) != 2:
                raise r.error(f"expected {expected}, got {quoted(fields)}")
            yield fields[0], fields[1], r


def _error_at_row(path: Path, member: str | None, row: int, message: str, sep: str | None = None) -> DataFormatError:
    """An error located at the line holding data row ``row`` (0-based; blank lines are not rows) of a file
    read by :func:`read_edge_list`: checks done on whole arrays find the row, this finds its line."""
    with open_text(path, member) as f:
        r = LineReader(f, source_name(path, member), sep=sep)
        next(itertools.islice(r, row, None))
        return r.error(message)


def read_node_labels(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(raw_ids, values)`` from lines ``node value``; a first line ``node label`` (struc2vec) is a header."""
    with open_text(path) as f:
        r = LineReader(f, str(path))
        ids, values, seen = [], [], set()
        for tokens in r:
            if r.line_number == 1 and [t.lower() for t in tokens] == ["node", "label"]:
                continue
            node, value = r.ints(tokens, "'node label' (two integers)", count=2)
            if node in seen:
                raise r.error(f"node {node} labelled twice")
            seen.add(node)
            ids.append(node)
            values.append(value)
    return np.asarray(ids, dtype=np.int64), np.asarray(values, dtype=np.int64)


def read_lpm_lscc(path: Path) -> tuple[int, np.ndarray]:
    """``(num_nodes, (k, 2) edges)`` from Yuxiao Dong's ``*.lpm.lscc`` format.

    ``*Vertices n``, then ``n`` lines ``new_id raw_id``; ``*Edges m``, then ``m`` lines ``u v weight``
    over the new ids.
    """
    with open_text(path) as f:
        r = LineReader(f, str(path))
        n = _section_header(r, "*Vertices")
        seen: set[int] = set()  # not an array of the declared size: each id must be on a line of its own
        for _ in range(n):
            new_id = r.ints(r.next(f"{n} vertex lines 'new_id raw_id'"), "'new_id raw_id'", count=2)[0]
            r.check_range([new_id], n, "vertex id")
            if new_id in seen:
                raise r.error(f"vertex id {new_id} listed twice")
            seen.add(new_id)
        m = _section_header(r, "*Edges")

        def edge() -> tuple[int, int]:
            u, v, _ = r.ints(r.next(f"{m} edge lines 'u v weight'"), "'u v weight'", count=3)
            r.check_range([u, v], n, "node id")
            return u, v

        edges = read_rows(m, edge)
        r.expect_end(f"{m} edge lines")
    return n, edges


def _section_header(r: LineReader, keyword: str) -> int:
    tokens = r.next(f"'{keyword} count'")
    if len(tokens) != 2 or tokens[0] != keyword:
        raise r.error(f"expected '{keyword} count', got {quoted(tokens)}")
    (count,) = r.ints(tokens[1:], f"'{keyword} count'")
    if count < 0:
        raise r.error(f"negative {keyword} count {count}")
    return count


def read_panther_graph(path: Path) -> tuple[int, np.ndarray]:
    """``(num_nodes, (m, 2) edges)`` from a Panther ``NAME.graph``: header ``n m``, then ``m`` rows ``u v count``."""
    with open_text(path) as f:
        r = LineReader(f, str(path))
        n, m = r.ints(r.next("header 'num_nodes num_edges'"), "header 'num_nodes num_edges'", count=2)
        if n < 0 or m < 0:
            raise r.error(f"negative count in header {n} {m}")
        if n > node_count_limit(m):
            raise r.error(f"header '{n} {m}' declares {n} nodes for {m} edges, more than {node_count_limit(m)} "
                          f"(2 x edges + {SPARE_NODES}, at most {MAX_NODES}): a wrong header?")

        def edge() -> tuple[int, int]:
            u, v, _ = r.ints(r.next(f"{m} edge rows 'u v count'"), "'u v count'", count=3)
            r.check_range([u, v], n, "node id")
            return u, v

        edges = read_rows(m, edge)
        r.expect_end(f"the {m} edge rows announced in the header")
    return n, edges


def read_panther_dict(path: Path, num_nodes: int) -> dict[str, int]:
    """Author name -> node id from a Panther ``NAME.dict`` (``name<TAB>id`` per line)."""
    with open_text(path) as f:
        r = LineReader(f, str(path), sep="\t")
        names: dict[str, int] = {}
        ids = set()
        for tokens in r:
            if len(tokens) != 2:
                raise r.error(f"expected 'name<TAB>id', got {quoted(tokens, chr(9))}")
            name, (node,) = tokens[0].strip(), r.ints(tokens[1:], "an integer node id after the tab")
            r.check_range([node], num_nodes, "node id")
            if name in names or node in ids:
                raise r.error(f"duplicate entry for name {quoted(name)} or id {node}")
            names[name] = node
            ids.add(node)
    return names


def _matrix_market_banner(r: LineReader, first: str) -> None:
    """Refuse, at line 1, a Matrix Market banner (``%%MatrixMarket matrix coordinate real general``) of a matrix with
    no adjacency reading: a dense ``array``, or ``complex`` entries."""
    words = first.lower().split()
    if not words or words[0] != "%%matrixmarket":
        return
    r.line_number = 1
    if "array" in words[1:3]:
        raise r.error("a dense 'array' matrix; expected a sparse 'coordinate' adjacency matrix")
    if "complex" in words:
        raise r.error("a 'complex' matrix: an adjacency matrix has real entries (the imaginary parts would be lost)")


def _entry_value(r: LineReader, token: str) -> float:
    """The value of a Matrix Market entry: a finite real number, else an error at its line."""
    try:
        value = float(token)
    except ValueError:
        raise r.error(f"entry value {quoted(token)} is not a number") from None
    if not np.isfinite(value):
        raise r.error(f"entry value {quoted(token)} is not a finite number")
    return value


def read_matrix_market(path: Path, member: str | None = None) -> tuple[int, np.ndarray]:
    """``(num_nodes, (k, 2) 0-based edges)`` from a coordinate Matrix Market file (``.mtx``): every entry whose
    value is not 0 (an explicit zero is no edge, as in :func:`~gcc_sgcl.data.graphs.graph_from_scipy`); a value that
    is not a finite real number, a complex or a dense matrix are refused at their line."""
    with open_text(path, member) as f:
        first = f.readline()
        r = LineReader(itertools.chain([first], f), source_name(path, member), comments=("%",))
        _matrix_market_banner(r, first)
        r.line_number = 0
        rows, cols, nnz = r.ints(r.next("header 'rows cols entries'"), "header 'rows cols entries'", count=3)
        header = f"header '{rows} {cols} {nnz}'"
        if rows != cols or rows < 0 or nnz < 0:
            raise r.error(f"expected a square adjacency matrix header, got {rows} {cols} {nnz}")
        if rows > node_count_limit(nnz):
            raise r.error(f"{header} declares {rows} nodes for {nnz} entries, more than {node_count_limit(nnz)} "
                          f"(2 x entries + {SPARE_NODES}, at most {MAX_NODES}): a wrong header?")

        def entry() -> tuple[int, int]:
            tokens = r.next(f"{nnz} entries 'row col [value]' (as {header} declares)")
            if len(tokens) not in (2, 3):
                raise r.error(f"expected 'row col [value]', got {quoted(tokens)}")
            u, v = r.ints(tokens[:2], "integer 'row col'")
            if not (1 <= u <= rows and 1 <= v <= rows):
                raise r.error(f"index out of range [1, {rows}]")
            if len(tokens) == 3 and _entry_value(r, tokens[2]) == 0:
                return -1, -1  # an explicit zero: no edge
            return u - 1, v - 1

        edges = read_rows(nnz, entry)
        r.expect_end(f"{nnz} entries")
    return rows, edges[edges[:, 0] >= 0]
