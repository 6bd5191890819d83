"""Derived index structures built from an index's chunks and stored beside it (``base``): the RAPTOR tree
of cluster summaries (``raptor``) and the entity graph with its communities (``graph``)."""
