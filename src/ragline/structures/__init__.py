"""Derived index structures built from an index's chunks (the entity graph; see docs/architecture.md)."""
