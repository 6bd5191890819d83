"""Structured JSON logs of the server: one line per request with its route, status, key name and time.

A log line never holds a question, an answer, a filter or a document: only the route template
(``/v1/documents/{doc_id}``, not the id), so restricted text cannot reach the logs.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

LOGGER = "ragline.server"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "event": record.getMessage(),
        }
        line.update(getattr(record, "fields", {}))
        if record.exc_info and record.exc_info[0] is not None:
            line["error_type"] = record.exc_info[0].__name__  # the type only: a message may quote a document
        return json.dumps(line, ensure_ascii=False, default=str)


class _StderrHandler(logging.StreamHandler):
    """Writes to ``sys.stderr`` as it is when a line is logged, not as it was when the server started
    (a server thread outlives a test's captured stderr; a log line must never hit a closed file)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:  # StreamHandler.__init__ assigns it; the property decides
        pass


def configure(level: str = "info", stream: Any = None) -> logging.Logger:
    """The server's logger, writing JSON lines to ``stream`` (default: the current stderr)."""
    logger = logging.getLogger(LOGGER)
    logger.handlers.clear()
    handler = logging.StreamHandler(stream) if stream is not None else _StderrHandler()
    handler.setFormatter(JsonFormatter())
    logger.addHandler(handler)
    logger.setLevel(level.upper())
    logger.propagate = False
    return logger


def log(event: str, level: int = logging.INFO, exc_info: bool = False, **fields: Any) -> None:
    logging.getLogger(LOGGER).log(level, event, extra={"fields": fields}, exc_info=exc_info)
