"""One exception hierarchy. Every message says what went wrong, where, and what to do about it."""

from __future__ import annotations


class RaglineError(Exception):
    """Base class of every error ragline raises on purpose."""


class ConfigError(RaglineError):
    """A setting, a flag or a config file is invalid."""


class ModelError(RaglineError):
    """A model could not be found, verified against its pinned hash, or loaded."""


class InputError(RaglineError):
    """A file or a record could not be read; ``source`` names it (path, path:line, field)."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class MetadataError(InputError):
    """A file's metadata (front matter, sidecar JSON) cannot be parsed.

    Unlike other input errors it does not keep the version indexed earlier: the metadata may be an ACL
    being tightened, so the file leaves the index until its metadata is fixed (fail closed).
    """


class FilterSyntaxError(RaglineError):
    """A filter expression could not be parsed."""

    def __init__(self, expression: str, position: int, reason: str) -> None:
        self.expression = expression
        self.position = position
        pointer = " " * position + "^"
        super().__init__(
            f"bad filter: {reason}\n  {expression}\n  {pointer}\n"
            "syntax: field=value, field!=value, field<=value (also <, >, >=), "
            "field in [a, b], joined with 'and' / 'or' / 'not' and parentheses"
        )


class IndexDirectoryError(RaglineError):
    """Base class of errors about an index directory."""


class IndexNotFoundError(IndexDirectoryError):
    def __init__(self, path: str) -> None:
        super().__init__(f"no ragline index at {path}: create one with `ragline index SOURCE --index {path}`")


class IndexPathIsFileError(IndexNotFoundError):
    """``--index`` names a file: no index is there, and none can be created there."""

    def __init__(self, path: str) -> None:
        IndexDirectoryError.__init__(
            self,
            f"{path} is a file, not a directory: --index names an index directory (a new one is created "
            "where nothing exists yet); give another path",
        )


class IndexLockedError(IndexDirectoryError):
    def __init__(self, path: str, holder: str) -> None:
        super().__init__(
            f"index {path} is locked by another writer ({holder}); wait for it to finish. "
            "If no ragline process is running, the lock is stale and is taken over automatically."
        )


class IndexMismatchError(IndexDirectoryError):
    """The index was built with another analyzer, model or format than the one asked for."""


class CorruptIndexError(IndexDirectoryError):
    """A file the manifest names is missing or does not match its recorded size."""
