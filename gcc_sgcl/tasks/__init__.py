"""Downstream evaluation of saved embeddings (GCC's ``gcc/tasks``), one module per task:

- ``node_classification.evaluate_node_classification`` — logistic regression, micro-F1, stratified CV
- ``graph_classification.evaluate_graph_classification`` — RBF SVC (GCC's C=100000 by default), accuracy
- ``similarity_search.evaluate_similarity_search`` — HITS@20/40 between two graphs
- ``finetune.finetune`` — the pre-trained encoder plus a linear head trained on each CV fold (GCC's fine-tuned rows)
- ``registry.TASKS`` — the one task table: each dataset kind's evaluation and fine-tuned rows
- ``cv`` — the repeated stratified k-fold CV, its bootstrap and the forked fold processes (``folds``: their cache)
- ``records.TaskResult`` — the result record and the ``results.csv`` log
- ``embeddings`` — loading the saved embeddings and checking them against the dataset and their record
- ``commands`` — the task commands' parser and loop over datasets, and the one classification entry point

Each task module is also a CLI: ``python -m gcc_sgcl.tasks.<task> --load-path P --hidden H --dataset D``.
Submodules are not imported here so that ``python -m`` runs them without a double-import warning.
"""
