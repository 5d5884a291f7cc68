"""Generators: seeding, taxonomy, catalog, world, difficulty, rendering and tasks."""
