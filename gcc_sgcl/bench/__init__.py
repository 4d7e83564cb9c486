"""Performance benchmarks, run together by ``python -m gcc_sgcl.bench`` (``scripts/bench.sh``).

- ``memory``: peak RSS/PSS of the whole process tree while pre-training ``gcc`` with DataLoader workers on a
  generated 1 M-node power-law graph (:mod:`gcc_sgcl.data.powerlaw`), and the time to generate + train;
- ``pe``: positional embeddings of RWR subgraphs — GCC's ARPACK reference vs the default per-view path vs the
  batched path (:func:`gcc_sgcl.sampling.spectral.eigen_arrays`);
- ``sampler``: pairs per second of ``PretrainPairDataset`` through a DataLoader per method and worker count;
- ``runtime``: seconds per mini-batch per method (:mod:`gcc_sgcl.experiments.runtime`);
- ``scaling``: positional-embedding and sampler cost for several ``rw_hops``;
- ``embed`` (only when named: ``python -m gcc_sgcl.bench embed``): streamed embedding of generated power-law graphs
  of 10 k to 1 M nodes at 2 and 32 views, CPU and wall ms per node and peak memory against the floor of the same
  views (bare ``eigh`` + one-thread forward), :mod:`gcc_sgcl.bench.embed`;
- ``denormal`` (only when named, with ``--denormal-checkpoint``): a trained encoder's model step with denormal floats
  kept and flushed (``--flush-denormal``), against a fresh encoder of its configuration, :mod:`gcc_sgcl.bench.denormal`.

Absolute numbers depend on the machine and its load; ratios are taken within one run.
"""
