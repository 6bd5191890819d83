"""ragline: a retrieval-augmented generation engine and evaluation lab that runs offline."""

__version__ = "0.1.0"

from ragline.errors import RaglineError
from ragline.types import Document, Hit, Query

__all__ = ["Document", "Hit", "Query", "RaglineError", "__version__"]
