"""Typed records shared by every layer: errors, taxonomy, table schemas, manifests."""
