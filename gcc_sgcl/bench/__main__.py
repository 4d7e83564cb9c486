"""Entry point of ``python -m gcc_sgcl.bench``."""
from gcc_sgcl.bench.cli import main

main()
