"""schemathesis against the served OpenAPI spec: no generated request (with a valid key) gets a 5xx.

The operations are driven through Hypothesis directly (schemathesis' pytest plugin does not load
under this pytest), every operation of the spec in turn, with the admin key so that every route runs.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from .conftest import Server

schemathesis = pytest.importorskip("schemathesis")
pytestmark = pytest.mark.slow


def test_no_generated_request_gets_a_server_error(served: Server) -> None:
    schema = schemathesis.openapi.from_url(served.url + "/openapi.json")
    headers = {"Authorization": f"Bearer {served.keys['admin']}"}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    failures, statuses = [], set()
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def run(case) -> None:
            response = case.call(headers=headers)
            statuses.add(response.status_code)
            if response.status_code >= 500:
                failures.append((case.operation.label, response.status_code, response.text[:200]))

        run()
    assert not failures, failures
    assert 200 in statuses and 422 in statuses  # it reached the routes, and their validation
