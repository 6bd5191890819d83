"""Per-key rate limits, request size limits and the request log, as ASGI middleware and helpers."""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ragline.server.logs import log


class RateLimiter:
    """At most ``per_minute`` requests per key in any 60 seconds, however many come at once.

    A sliding log: the times of the requests let through in the last window, per key (at most
    ``per_minute`` of them). A token bucket refilled while a burst was being served let more through
    than the limit (124 of 140 parallel requests under 120 a minute). A rate under one a minute lets one
    request through per ``60 / per_minute`` seconds. ``clock``: seconds, monotonic (tests pass their own).
    """

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.limit = max(1, math.floor(per_minute)) if per_minute > 0 else 0
        self.window = 60.0 * self.limit / per_minute if per_minute > 0 else 60.0
        self._clock = clock
        self._passed: dict[str, deque[float]] = {}  # key name -> times of the requests let through
        self._lock = threading.Lock()

    def take(self, key: str) -> float | None:
        """None when ``key`` may go on (and the request is counted); else the seconds until it may."""
        if self.per_minute <= 0:
            return None
        with self._lock:  # the clock is read under the lock too: each key's log stays in time order
            now = self._clock()
            passed = self._passed.setdefault(key, deque())
            while passed and now - passed[0] >= self.window:
                passed.popleft()
            if len(passed) < self.limit:
                passed.append(now)
                return None
            return self.window - (now - passed[0])


class BodyTooLarge(Exception):
    pass


class RequestGuard:
    """ASGI middleware: refuses bodies over ``max_body_bytes`` (413) and logs each request as one JSON line."""

    def __init__(self, app: Any, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        scope.setdefault("state", {})
        status = {"code": 0, "logged": False}

        async def send_logged(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                # Logged before the last bytes leave: a client that has its answer finds the line written.
                self._log(scope, status["code"], started)
                status["logged"] = True
            await send(message)

        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body_bytes):
            await _error(send_logged, 413, "request_too_large", f"the request body is over {self.max_body_bytes} bytes")
            return
        seen = {"bytes": 0}

        async def receive_counted() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "http.request":
                seen["bytes"] += len(message.get("body", b""))
                if seen["bytes"] > self.max_body_bytes:
                    raise BodyTooLarge
            return message

        try:
            await self.app(scope, receive_counted, send_logged)
        except BodyTooLarge:
            if status["code"] == 0:
                await _error(
                    send_logged, 413, "request_too_large", f"the request body is over {self.max_body_bytes} bytes"
                )
        finally:
            if not status["logged"]:  # no complete response (a dropped connection, an error before one)
                self._log(scope, status["code"], started)

    @staticmethod
    def _log(scope: dict[str, Any], code: int, started: float) -> None:
        route = scope.get("route")
        state = scope.get("state") or {}
        log(
            "request",
            method=scope.get("method"),
            route=getattr(route, "path", None) or "(unrouted)",
            status=code,
            key=state.get("key_name"),
            ms=round((time.perf_counter() - started) * 1000, 1),
        )


async def _error(send: Any, status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> None:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    extra = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra],
        }
    )
    await send({"type": "http.response.body", "body": body})


def retry_after(seconds: float) -> str:
    return str(max(1, math.ceil(seconds)))
