"""Downstream evaluation of saved embeddings (GCC's ``gcc/tasks``), one module per task:

- ``node_classification.evaluate_node_classification`` — logistic regression, micro-F1, stratified CV
- ``graph_classification.evaluate_graph_classification`` — RBF SVC (GCC's C=100000 by default), accuracy
- ``similarity_search.evaluate_similarity_search`` — HITS@20/40 between two graphs
- ``finetune.finetune`` — the pre-trained encoder plus a linear head trained on each CV fold (GCC's fine-tuned rows)
- ``common.TaskResult`` — the result record; ``results.csv`` writing and the shared CLI loop

Each task module is also a CLI: ``python -m gcc_sgcl.tasks.<task> --load-path P --hidden H --dataset D``.
Submodules are not imported here so that ``python -m`` runs them without a double-import warning.
"""
