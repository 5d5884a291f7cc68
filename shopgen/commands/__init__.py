"""One module per CLI command; see ``shopgen.cli.COMMANDS``."""
