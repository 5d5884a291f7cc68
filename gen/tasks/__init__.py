"""Task generators: one module per environment, each with ``generate`` and ``oracle``."""
