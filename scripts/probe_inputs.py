#!/usr/bin/env python
"""A probe of hostile inputs: planted links, sizes a file declares, formats read two ways, malformed flags. Each case
runs the command a user would type (or the API call) in a fresh process under a memory cap and a time limit, and is
classed by what it does: ``refused`` (one line, a non-zero status, no traceback), ``accepted`` (status 0, its output
checked where the case says), ``traceback``, ``killed`` (memory) or ``hang``. Every case states the outcome it
expects; a case whose outcome differs is marked ``UNEXPECTED``.

    .venv/bin/python scripts/probe_inputs.py                    the table, on stdout (about 3 min on 2 cores)
    .venv/bin/python scripts/probe_inputs.py --write docs/hostile-inputs.md

The encoder is the shipped ``saved/pretrained/gcc_e2e_snap5_6000x256_s0`` (copied into a scratch folder, which every
output goes to); nothing of the repository is written except ``--write``'s file.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENCODER = ROOT / "saved" / "pretrained" / "gcc_e2e_snap5_6000x256_s0"
MEMORY_CAP_KB = 4_000_000
TIME_LIMIT_S = 120


@dataclass
class Case:
    klass: str
    name: str
    setup: str  # python run in the scratch folder before the command (files, links)
    command: list[str]  # argv, or ["python", "-c", code]
    expect: str  # "refused" or "accepted"
    check: str = ""  # python asserting on the scratch folder after an accepted run


def _api(code: str) -> list[str]:
    prelude = ("import warnings; warnings.simplefilter('ignore')\n"
               "import gcc_sgcl, dgl, torch, numpy as np, networkx as nx\n")
    wrapped = prelude + "from gcc_sgcl.cli import user_errors\nwith user_errors():\n" + textwrap.indent(code, "    ")
    return [sys.executable, "-c", wrapped]


def _gen(*datasets: str, flags: tuple[str, ...] = ()) -> list[str]:
    return ["bash", str(ROOT / "scripts" / "generate.sh"), "-1", "run", *datasets, *flags]


def cases() -> list[Case]:
    tri = "open('g.edgelist','w').write('1 2\\n2 3\\n3 1\\n3 4\\n')\n"
    return [
        # ---- links planted in a folder the package writes into
        Case("link", "ids.txt planted as a link to a file outside",
             tri + "open('outside.txt','w').write('precious\\n'); import os; "
             "os.symlink(os.path.abspath('outside.txt'), 'run/g.ids.txt')",
             _gen("g.edgelist"), "refused", "assert open('outside.txt').read() == 'precious\\n'"),
        Case("link", "provenance record planted as a dangling link",
             tri + "import os; os.symlink('/tmp/nowhere-probe/x.json', 'run/g.provenance.json')",
             _gen("g.edgelist"), "refused", "import os; assert not os.path.exists('/tmp/nowhere-probe')"),
        Case("link", "the embedding .npy planted as a link to a directory",
             tri + "import os; os.mkdir('adir'); os.symlink(os.path.abspath('adir'), 'run/g.npy')",
             _gen("g.edgelist"), "refused", "import os; assert os.listdir('adir') == []"),
        Case("link", "a pre-training run folder's config.json planted as a link",
             "import os; os.makedirs('out/r'); open('keep.json','w').write('{}'); "
             "os.symlink(os.path.abspath('keep.json'), 'out/r/config.json')",
             ["bash", str(ROOT / "scripts" / "pretrain.sh"), "-1", "gcc", "--steps", "2", "--batch-size", "4",
              "--output-dir", "out", "--run-name", "r", "--corpus", "synthetic"],
             "refused", "assert open('keep.json').read() == '{}'"),
        # ---- sizes an input declares
        Case("size", "GIN text whose first line declares 10^12 graphs",
             "open('g.txt','w').write('1000000000000\\n3 0\\n0 1 1\\n0 1 0\\n0 0\\n')", _gen("g.txt"), "refused"),
        Case("size", "GIN graph line declaring 10^10 nodes",
             "open('g.txt','w').write('1\\n10000000000 0\\n0 1 1\\n')", _gen("g.txt"), "refused"),
        Case("size", "Matrix Market header declaring 10^15 entries in a 3-line file",
             "open('m.mtx','w').write('3 3 1000000000000000\\n1 2\\n2 3\\n')", _gen("m.mtx"), "refused"),
        Case("size", "edge list with a 40-digit integer id",
             "open('g.edgelist','w').write('1 2\\n2 1234567890123456789012345678901234567890\\n')",
             _gen("g.edgelist", flags=("--copies", "2")), "accepted",
             "assert open('run/g.ids.txt').read().split()[2] == '1234567890123456789012345678901234567890'"),
        Case("size", "TU collection whose node indicator names graph 10^12",
             "import os; os.mkdir('T'); open('T/T_A.txt','w').write('1, 2\\n2, 1\\n'); "
             "open('T/T_graph_indicator.txt','w').write('1\\n1000000000000\\n'); "
             "open('T/T_graph_labels.txt','w').write('1\\n')", _gen("T"), "refused"),
        Case("size", "a task's .npy whose header claims 10^12 rows",
             tri + "import numpy as np, subprocess\n"
             "open('run/g.npy','wb').write(b'\\x93NUMPY\\x01\\x00v\\x00' + (\"{'descr': '<f4', 'fortran_order': False, "
             "'shape': (1000000000000, 64), }\".ljust(117) + '\\n').encode() + b'\\0' * 64)\n"
             "open('labels.txt','w').write('1 0\\n2 1\\n3 0\\n4 1\\n')",
             ["bash", str(ROOT / "scripts" / "node_classification" / "ours.sh"), "run", "64", "g.edgelist",
              "--labels", "labels.txt"], "refused"),
        Case("size", "a checkpoint whose config claims positional_embedding_size 10^9",
             "import torch; s = torch.load('run/checkpoint.pt', weights_only=True); "
             "s['config']['sampling']['positional_embedding_size'] = 10**9; torch.save(s, 'run/checkpoint.pt')",
             _api("gcc_sgcl.load_encoder('run')"), "refused"),
        Case("size", "generate --batch-size 10^12",
             tri, _gen("g.edgelist", flags=("--batch-size", "1000000000000")), "accepted",
             "import numpy as np; assert np.load('run/g.npy').shape == (4, 64)"),
        Case("size", "API workers=10^6",
             "", _api("gcc_sgcl.load_encoder('run').embed_nodes(nx.path_graph(5), workers=10**6, copies=1)"),
             "refused"),
        # ---- one reading of each format, the same through the API
        Case("format", "edge list starting with a byte-order mark, CRLF line ends",
             "open('g.edgelist','wb').write(b'\\xef\\xbb\\xbf1 2\\r\\n2 3\\r\\n3 1\\r\\n')",
             _gen("g.edgelist", flags=("--copies", "2")), "accepted",
             "assert open('run/g.ids.txt').read().split() == ['1', '2', '3']"),
        Case("format", "tab-separated ids quoted with tabs and commas inside",
             "open('g.tsv','w').write('\"a\\tb\"\\t\"c, d\"\\n\"c, d\"\\te\\ne\\t\"a\\tb\"\\n')",
             _api("d = gcc_sgcl.read_graph_file('g.tsv'); assert d.ids.tolist() == ['a\\tb', 'c, d', 'e'], d.ids"),
             "accepted"),
        Case("format", "a quoted id left open at line 3",
             "open('g.csv','w').write('a,b\\nb,c\\n\"c,d\\n')", _gen("g.csv"), "refused"),
        Case("format", "Matrix Market with an explicit zero on the diagonal and off it",
             "open('m.mtx','w').write('%%MatrixMarket matrix coordinate integer general\\n3 3 4\\n"
             "1 1 0\\n1 2 0\\n2 3 5\\n3 1 1\\n')",
             _api("d = gcc_sgcl.read_graph_file('m.mtx'); assert d.graph.num_edges() == 4, d.graph.num_edges()"),
             "accepted"),
        Case("format", "Matrix Market entry '1 2 -inf'",
             "open('m.mtx','w').write('%%MatrixMarket matrix coordinate real general\\n3 3 2\\n2 3 1\\n1 2 -inf\\n')",
             _gen("m.mtx"), "refused"),
        Case("format", "GML whose label holds a carriage return",
             "import networkx as nx; g = nx.Graph([('x\\ry', 'z'), ('z', 'w')]); nx.write_graphml(g, 'g.graphml')",
             _gen("g.graphml"), "refused"),
        Case("format", "labels file with '<NA>' and '' labels (pandas' missing values)",
             tri + "open('labels.csv','w').write('node,label\\n1,a\\n2,<NA>\\n3,b\\n4,\\n')",
             _api("d = gcc_sgcl.read_graph_file('g.edgelist', 'labels.csv')\n"
                  "assert d.labels.tolist() == [0, -1, 1, -1]"),
             "accepted"),
        Case("format", "a DGL binary whose label tensor is complex",
             "import dgl, torch; gs = [dgl.graph(([0, 1], [1, 0]))] * 2; "
             "dgl.save_graphs('c.bin', gs, {'labels': torch.tensor([1+1j, 0j])})", _gen("c.bin"), "refused"),
        Case("format", "API scipy matrix with a NaN entry vs its .mtx file",
             "", _api("import scipy.sparse as sp\n"
                      "gcc_sgcl.as_dgl_graph(sp.coo_array(([np.nan], ([0], [1])), shape=(2, 2)))"),
             "refused"),
        Case("format", "an API list holding an edgeless and a 0-node graph",
             "", _api("gcc_sgcl.load_encoder('run').embed_graphs([nx.path_graph(3), nx.empty_graph(2), nx.Graph()])"),
             "refused"),
        # ---- flags and values
        Case("message", "--threads -1", tri, _gen("g.edgelist", flags=("--threads", "-1")), "refused"),
        Case("message", "--device cuda:7 on a machine without CUDA", tri,
             [sys.executable, "-m", "gcc_sgcl.engine.generate", "--device", "cuda:7", "--load-path", "run",
              "--dataset", "g.edgelist"], "refused"),
        Case("message", "a load path that is an .npy file", tri + "import numpy as np; np.save('x.npy', np.zeros(3))",
             ["bash", str(ROOT / "scripts" / "generate.sh"), "-1", "x.npy", "g.edgelist"], "refused"),
        Case("message", "a dataset path that is a plain folder (not TU)", "import os; os.mkdir('plain')",
             _gen("plain"), "refused"),
        Case("message", "a gzip edge list cut in the middle",
             "import gzip; data = gzip.compress(b'1 2\\n' * 5000)\n"
             "open('g.edgelist.gz','wb').write(data[:len(data)//2])",
             _gen("g.edgelist.gz"), "refused"),
        Case("message", "an edge list of binary garbage", "open('g.edgelist','wb').write(bytes(range(256)) * 4)",
             _gen("g.edgelist"), "refused"),
        Case("message", "API threads=True", "",
             _api("gcc_sgcl.load_encoder('run').embed_nodes(nx.path_graph(5), threads=True)"), "refused"),
        Case("message", "config num_layers '5' in a checkpoint",
             "import torch; s = torch.load('run/checkpoint.pt', weights_only=True); "
             "s['config']['model']['num_layers'] = '5'; torch.save(s, 'run/checkpoint.pt')",
             _api("gcc_sgcl.load_encoder('run')"), "refused"),
    ]


def run_case(case: Case, scratch: Path) -> tuple[str, str]:
    """``(outcome, detail)`` of ``case`` run in a fresh copy of the scratch folder."""
    work = scratch / "case"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    shutil.copytree(ENCODER, work / "run")
    if case.setup:
        subprocess.run([sys.executable, "-c", case.setup], cwd=work, check=True, capture_output=True)
    env = {**os.environ, "GCC_SGCL_CACHE": str(scratch / "cache"), "PYTHONWARNINGS": "ignore"}
    limited = ["bash", "-c", f'ulimit -v {MEMORY_CAP_KB}; exec "$@"', "probe", *case.command]
    try:
        done = subprocess.run(limited, cwd=work, env=env, capture_output=True, text=True, timeout=TIME_LIMIT_S)
    except subprocess.TimeoutExpired:
        return "hang", f"no end within {TIME_LIMIT_S} s"
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("[gcc_sgcl]")]
    if "Traceback" in done.stderr:
        return "traceback", lines[-1] if lines else ""
    if done.returncode in (-9, 137) or "MemoryError" in done.stderr:
        return "killed", f"status {done.returncode}"
    if done.returncode != 0:
        return ("refused", lines[-1]) if len(lines) == 1 else ("unclear", " / ".join(lines[-3:]))
    if case.check:
        checked = subprocess.run([sys.executable, "-c", case.check], cwd=work, capture_output=True, text=True)
        if checked.returncode != 0:
            return "wrong", (checked.stderr.strip().splitlines() or ["check failed"])[-1]
    return "accepted", "status 0" + (", output checked" if case.check else "")


def _cell(text: str, limit: int = 170) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    text = re.sub(re.escape(tempfile.gettempdir()) + r"/probe-[^/]+/case", "$CASE", text)
    text = text.replace(tempfile.gettempdir(), "$TMP")
    return text if len(text) <= limit else text[:limit] + "…"


def table(results: list[tuple[Case, str, str]]) -> str:
    rows = ["| class | case | expected | outcome | what it said |", "|---|---|---|---|---|"]
    for case, outcome, detail in results:
        mark = outcome if outcome == case.expect else f"**UNEXPECTED: {outcome}**"
        if case.expect == "refused" and outcome == "accepted" and case.check:
            mark = f"**UNEXPECTED: {outcome}**"
        rows.append(f"| {case.klass} | {_cell(case.name)} | {case.expect} | {mark} | `{_cell(detail)}` |")
    unexpected = sum(outcome != case.expect for case, outcome, _ in results)
    rows.append("")
    rows.append(f"{len(results)} cases, {len(results) - unexpected} as expected, {unexpected} unexpected.")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", help="a markdown file whose generated part is replaced by the table")
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    chosen = [c for c in cases() if args.k in c.name]
    results = []
    with tempfile.TemporaryDirectory(prefix="probe-") as scratch:
        for i, case in enumerate(chosen, 1):
            outcome, detail = run_case(case, Path(scratch))
            print(f"[{i}/{len(chosen)}] {case.name}: {outcome} ({detail[:100]})", file=sys.stderr)
            results.append((case, outcome, detail))
    text = table(results)
    if args.write:
        path = Path(args.write)
        head, marker = path.read_text().split("<!-- probe table -->")[0], "<!-- probe table -->"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(f"{head}{marker}\n{text}\n")
        os.replace(tmp, path)
    print(text)
    if any(outcome != case.expect for case, outcome, _ in results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
