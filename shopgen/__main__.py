"""``python -m shopgen`` runs the CLI."""

from shopgen.cli import entry

entry()
