"""Experiments built from the pipeline: the embedded demo (and, later, sweeps and reports)."""
