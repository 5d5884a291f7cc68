"""Adapters that let training stacks run shopgen episodes (TRL, verl, verifiers)."""
