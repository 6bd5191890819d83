"""``ragline serve``: the HTTP API, its API keys, the OpenAI-compatible endpoint and the web page.

``create_app(engine, keys, settings)`` (``app.py``) is the FastAPI app; ``Engine`` (``engine.py``) holds the
served index and pipeline; ``keys.py`` the keys file; ``openai_api.py`` chat completions; ``static/`` the page.
"""
