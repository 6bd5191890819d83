"""The server's OpenAPI spec, as checked in at docs/openapi.json: ``python -m ragline.server.spec > docs/openapi.json``.

The spec depends only on the routes and their bodies, so it is made from an app over an empty in-memory index.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def openapi_spec() -> dict[str, Any]:
    from ragline.config import load_config
    from ragline.index import Index, IndexSettings
    from ragline.server.app import create_app
    from ragline.server.engine import Engine
    from ragline.server.keys import KeyRing

    config = load_config("extractive").with_overrides(retrieve={"retriever": "bm25"})
    app = create_app(Engine(Index.create(None, IndexSettings()), config), KeyRing("/nonexistent/ragline-keys.json"))
    return app.openapi()


if __name__ == "__main__":
    sys.stdout.write(json.dumps(openapi_spec(), indent=2, ensure_ascii=False) + "\n")
