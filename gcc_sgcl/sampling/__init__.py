"""RWR subgraph sampling and Laplacian eigen-features."""
