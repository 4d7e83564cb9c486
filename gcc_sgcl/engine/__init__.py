"""Pre-training, checkpointing and embedding generation."""
