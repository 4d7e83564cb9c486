"""Which rows the report's tables show, declared by a :class:`TableSpec`: the pre-training budget (steps, corpus,
each mode's batch), the evaluation protocol of each kind (frozen, fine-tuned) and the method spec each label
stands for (the tables' ``sgcl`` is SGCL at the c the grid chose; ``random init`` is ``gcc`` pre-trained for 0
steps). The stored rows are never renamed: :meth:`TableSpec.select` returns the table's view of them, and a row
of the table's budget evaluated under another protocol is an error, not outvoted.

The budget comes from the learning curve (its last step count: the sweep trains the table encoders there, see
:mod:`gcc_sgcl.experiments.studies.budget`) or, without a curve, is the one budget of the trained rows; the spec is
written beside the rows (``tables.json``) and printed in the report's provenance.
"""
from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from gcc_sgcl.config import AugmentConfig
from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow
from gcc_sgcl.fileio import atomic_target
from gcc_sgcl.method import MethodSpec
from gcc_sgcl.presets import SINGLE_STAGES
from gcc_sgcl.settings import default_of

BASELINE = "gcc"
SGCL = "sgcl"
RANDOM_INIT = "random init"  # the label of an encoder pre-trained for 0 steps
FINETUNED = ("node_classification_finetuned", "graph_classification_finetuned")
TABLES_FILE = "tables.json"
# The single-stage presets ``sgcl-<stage>`` (:data:`gcc_sgcl.presets.SINGLE_STAGES`): the random controls, and the
# stages of the pairs heat-map (similar and diverse being the filter's two modes, in the pipeline's order), which
# the sweep trains and the report reads.
CONTROLS = tuple(s for s in SINGLE_STAGES if s.startswith("random-"))
HEATMAP_STAGES = tuple(s for s in SINGLE_STAGES if s not in CONTROLS)

# (steps, batch size, corpus): the pre-training budget of an encoder
Budget = tuple[int | None, int | None, str | None]


def budget_of(row: ResultRow) -> Budget:
    """The pre-training budget of the encoder behind ``row``."""
    return row.steps, row.batch_size, row.corpus


PROTOCOL_FIELDS = ("repeats", "folds", "eval_seed", "svc", "epochs", "max_folds", "view_copies", "copies")


def evaluation_protocol(row: ResultRow) -> tuple:
    """What makes two evaluations comparable besides the encoder: frozen or fine-tuned, CV repetitions, folds,
    seed, SVC protocol, fine-tuning's epochs, folds run and view copies, and a frozen encoder's inference views."""
    return (row.task in FINETUNED, *(getattr(row, name) for name in PROTOCOL_FIELDS))


def _trained(row: ResultRow) -> bool:
    return row.mode != CLASSICAL_MODE and row.task != "runtime"


def reads_c(method: str) -> bool:
    """Whether ``method``'s views pass SGCL's similar/diverse filter, the one stage that reads ``c``.

    >>> reads_c("sgcl"), reads_c("sgcl-crop+similar"), reads_c("sgcl-crop"), reads_c("graphcl")
    (True, True, False, False)
    """
    from gcc_sgcl.presets import settings_read  # here: the presets import the augmentations (torch, DGL)

    return settings_read(method)["c"]


@dataclass(frozen=True)
class TableSpec:
    """The rows of one table and the name each shows under.

    Args:
        steps: pre-training steps of the table's encoders.
        corpus: their pre-training corpus.
        batches: per mode, the batch size of its encoders (MoCo runs at the paper's 32, E2E at the budget's).
        protocols: per kind (``True``: fine-tuned), the :func:`evaluation_protocol` of its rows.
        default_c: the filter threshold of the plain ``sgcl`` preset's rows.
        sgcl_c: the c of the tables' ``sgcl`` row (the c grid's choice); ``None``: the plain preset's.
        random_init: the method whose 0-step encoders are the ``random init`` row, at each mode's batch.
    """

    steps: int | None
    corpus: str | None
    batches: dict[str, int | None] = field(default_factory=dict)
    protocols: dict[bool, tuple] = field(default_factory=dict)
    default_c: float = default_of(AugmentConfig, "c")
    sgcl_c: float | None = None
    random_init: str | None = BASELINE

    def at_sgcl_c(self, c: float | None) -> TableSpec:
        """This spec with the tables' ``sgcl`` row at filter threshold ``c`` (``None``: every c named)."""
        return dataclasses.replace(self, sgcl_c=c)

    def _same_protocol(self, row: ResultRow) -> bool:
        """A training-free row averages no inference views: its copies are not compared."""
        got = evaluation_protocol(row)
        want = self.protocols.get(row.task in FINETUNED, got)
        return want == got if row.mode != CLASSICAL_MODE else want[:-1] == got[:-1]

    def _at_budget(self, row: ResultRow) -> bool:
        return row.mode in self.batches and (row.steps, row.batch_size, row.corpus) == (
            self.steps, self.batches[row.mode], self.corpus)

    def _untrained(self, row: ResultRow) -> bool:
        return (_trained(row) and row.steps == 0 and row.corpus == self.corpus and row.method == self.random_init
                and row.batch_size == self.batches.get(row.mode))

    def label(self, method: str) -> str:
        """The name a stored method shows under: every method reading SGCL's filter threshold (plain ``sgcl``,
        ``sgcl[k=64]``, ``sgcl-similar``, joined rows too) names its c, except those at :attr:`sgcl_c`, which
        name none (the tables' ``sgcl`` row is SGCL at the chosen c); other methods keep their name.

        >>> spec = TableSpec(6000, "snap", default_c=0.3, sgcl_c=0.4)
        >>> [spec.label(m) for m in ("sgcl", "sgcl[c=0.4]", "sgcl[c=0.4] ⊕ structural", "sgcl-crop", "gcc")]
        ['sgcl[c=0.3]', 'sgcl', 'sgcl ⊕ structural', 'sgcl-crop', 'gcc']
        """
        try:
            spec = MethodSpec.parse(method)
            filtered = reads_c(spec.preset)
        except ValueError:  # not a method name
            return method
        if not filtered:
            return method
        c = spec.get("c", self.default_c)
        return str(spec.with_settings(c=None if self.sgcl_c is not None and c == self.sgcl_c else c))

    def select(self, rows: Sequence[ResultRow]) -> list[ResultRow]:
        """The table's view of ``rows``: its encoders' rows, the training-free rows and the runtime rows, the
        0-step encoders of :attr:`random_init` as ``random init``, each under its :meth:`label`; a row of the
        table (its budget, a training-free row) under another protocol raises ``ValueError`` naming both."""
        out = []
        for r in rows:
            if r.task != "runtime" and not (r.mode == CLASSICAL_MODE or self._at_budget(r) or self._untrained(r)):
                continue  # another table's row (the learning curve's, another method's untrained encoder)
            if r.task != "runtime" and not self._same_protocol(r):
                raise ValueError(f"a {r.method} {r.mode} seed {r.seed} row on {r.dataset} ({r.time}) was evaluated "
                                 f"under {evaluation_protocol(r)}, the table's rows under "
                                 f"{self.protocols[r.task in FINETUNED]}: one protocol per table (move the other "
                                 "rows to their own store)")
            untrained = r.task != "runtime" and r.mode != CLASSICAL_MODE and not self._at_budget(r)
            out.append(self._labelled(r, RANDOM_INIT if untrained else self.label(r.method)))
        return out

    @staticmethod
    def _labelled(row: ResultRow, label: str) -> ResultRow:
        return row if label == row.method else dataclasses.replace(row, method=label)

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON-ready data (``tables.json``)."""
        return {"steps": self.steps, "corpus": self.corpus, "batches": self.batches,
                "protocols": {("finetuned" if k else "frozen"): dict(zip(PROTOCOL_FIELDS, v[1:]))
                              for k, v in self.protocols.items()},
                "default_c": self.default_c, "sgcl": str(self.sgcl), "random_init": self.random_init}

    @property
    def sgcl(self) -> MethodSpec:
        """The method spec behind the tables' ``sgcl`` row."""
        return MethodSpec.of(SGCL, {"c": self.default_c if self.sgcl_c is None else self.sgcl_c})

    def write(self, path: str | Path) -> Path:
        """Write :meth:`to_dict` to ``path`` (through a temporary file)."""
        with atomic_target(Path(path)) as tmp:
            tmp.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        return Path(path)


def the_one(values: dict, what: str) -> Any:
    """The single key of ``values`` (value → an example row); several raise ``ValueError`` naming them."""
    if len(values) > 1:
        raise ValueError(f"the table's rows hold {len(values)} {what}: "
                         + "; ".join(f"{v} (e.g. {r.method} {r.mode} seed {r.seed} on {r.dataset})"
                                     for v, r in values.items()) + " — one per table")
    return next(iter(values))


def table_spec(rows: Sequence[ResultRow], budget: Budget | None,
               default_c: float = default_of(AugmentConfig, "c")) -> TableSpec | None:
    """The spec of the table at ``budget`` (steps and corpus; its batch is E2E's): per mode the one batch of its
    encoders there (E2E's the budget's), per kind the one protocol of those encoders' rows, its ``sgcl`` the plain preset (``default_c``; :meth:`TableSpec.at_sgcl_c` moves it). Two batches of a
    mode or two protocols of a kind are a ``ValueError`` naming them; ``None`` without a budget."""
    if budget is None:
        return None
    steps, batch, corpus = budget
    found: dict[str, dict[int | None, ResultRow]] = defaultdict(dict)
    for r in rows:
        if _trained(r) and (r.steps, r.corpus) == (steps, corpus):
            found[r.mode].setdefault(r.batch_size, r)
    batches = {mode: the_one(seen, f"{mode} batch sizes at {steps} steps") for mode, seen in found.items()}
    if batches.get("e2e", batch) != batch:
        raise ValueError(f"the table's budget has batch {batch}, its E2E encoders at {steps} steps batch {batches['e2e']}")
    spec = TableSpec(steps, corpus, batches, {}, default_c, sgcl_c=default_c)
    kinds: dict[bool, dict[tuple, ResultRow]] = defaultdict(dict)
    for r in rows:
        if _trained(r) and spec._at_budget(r):
            kinds[r.task in FINETUNED].setdefault(evaluation_protocol(r), r)
    protocols = {kind: the_one(seen, ("fine-tuned" if kind else "frozen") + " evaluation protocols")
                 for kind, seen in kinds.items()}
    untrained = {r.method for r in rows if _trained(r) and r.steps == 0 and r.corpus == corpus}
    source = BASELINE if BASELINE in untrained or not untrained else sorted(untrained)[0]
    return dataclasses.replace(spec, protocols=protocols, random_init=source)


def table_budget(rows: Sequence[ResultRow]) -> Budget | None:
    """The budget of the trained rows (0-step rows left out) when they have one (each mode may have its own batch
    size: the E2E one is the budget's); several are a ``ValueError`` naming them."""
    seen: dict[tuple, ResultRow] = {}
    for r in rows:
        if _trained(r) and r.steps:
            seen.setdefault((r.steps, r.corpus), r)
    if not seen:
        return None
    steps, corpus = the_one(seen, "pre-training budgets (declare the table's budget with a learning curve)")
    batches = {r.batch_size: r for r in rows if _trained(r) and (r.steps, r.corpus) == (steps, corpus)}
    e2e = {r.batch_size: r for r in rows if _trained(r) and r.mode == "e2e" and (r.steps, r.corpus) == (steps, corpus)}
    return steps, the_one(e2e or batches, f"E2E batch sizes at {steps} steps"), corpus
