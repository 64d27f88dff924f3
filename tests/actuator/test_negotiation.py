"""Accept negotiation for /actuator/metrics (RFC 9110 12.5.1 with q-values)."""

from __future__ import annotations

from typing import Any

import pytest

from service_actuator.negotiation import OPENMETRICS_1_0_0, TEXT_0_0_4, ExpositionFormat, negotiate

TEXT = TEXT_0_0_4
OM = OPENMETRICS_1_0_0

PROMETHEUS_2_SCRAPE = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)
PROMETHEUS_3_SCRAPE = (
    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
    "application/openmetrics-text;version=0.0.1;q=0.5,"
    "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,"
    "text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
)
PROMETHEUS_3_TEXT_FIRST = (
    "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.9,text/plain;version=0.0.4;q=0.8,"
    "application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"
)

CASES: list[tuple[str | None, ExpositionFormat | None]] = [
    # absent, blank and wildcards: the default
    (None, TEXT),
    ("", TEXT),
    ("   ", TEXT),
    ("*/*", TEXT),
    ("text/*", TEXT),
    ("text/plain", TEXT),
    ("TEXT/PLAIN", TEXT),
    ("text/plain; charset=utf-8", TEXT),
    ("text/plain;version=0.0.4", TEXT),
    ('text/plain; version="0.0.4"', TEXT),
    ("application/*", OM),
    # OpenMetrics
    ("application/openmetrics-text", OM),
    ("application/openmetrics-text; version=1.0.0", OM),
    ("application/openmetrics-text;version=1.0.0;charset=utf-8", OM),
    ("application/openmetrics-text;version=1.0.0;escaping=underscores", OM),
    # q-values decide
    ("application/openmetrics-text;q=0.5, text/plain;q=0.9", TEXT),
    ("application/openmetrics-text;q=0.9, text/plain;q=0.5", OM),
    ("text/plain;q=0.5, application/openmetrics-text", OM),
    ("text/plain;q=0.001, application/openmetrics-text;q=0", TEXT),
    ("text/plain;q=0, */*", OM),
    ("application/openmetrics-text;q=0, */*;q=0.3", TEXT),
    ("text/plain;q=0, application/openmetrics-text;q=0", None),
    ("text/plain;q=0, application/openmetrics-text;q=0, */*", None),
    # equal q: the more specific match wins, then text
    ("*/*, application/openmetrics-text", OM),
    ("text/*, application/openmetrics-text;version=1.0.0", OM),
    ("text/plain, application/openmetrics-text", TEXT),
    # versions we do not serve
    ("text/plain;version=1.0.0", None),
    ("text/plain;version=1.0.0;escaping=allow-utf-8", None),
    ("application/openmetrics-text;version=0.0.1", None),
    ("application/openmetrics-text;version=2.0.0", None),
    ("text/plain;version=1.0.0, */*;q=0.1", TEXT),
    ("text/plain;version=1.0.0, text/*;q=0.4, application/openmetrics-text;q=0.3", TEXT),
    ("application/openmetrics-text;version=0.0.1, text/plain;version=0.0.4;q=0.2", TEXT),
    # specific overrides general
    ("text/*;q=0, text/plain;version=0.0.4", TEXT),
    ("text/plain;version=0.0.4;q=0, text/plain", None),
    ("text/plain;charset=iso-8859-1", None),
    # real scrapers
    (PROMETHEUS_2_SCRAPE, OM),
    (PROMETHEUS_3_SCRAPE, OM),
    (PROMETHEUS_3_TEXT_FIRST, TEXT),
    ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", TEXT),
    # unacceptable
    ("application/json", None),
    ("text/html", None),
    ("application/json, text/html;q=0.9", None),
    # malformed pieces are ignored; wholly malformed means no preference
    ("garbage", TEXT),
    ("text/plain;q=abc", TEXT),
    ("application/json, text/plain;q=2", None),
    ("*/plain", TEXT),
    ("application/openmetrics-text;q=1.0000, text/plain;q=0.5", TEXT),
    (", ,application/openmetrics-text", OM),
    ('application/openmetrics-text;foo="a,b";q=0.8, text/plain;q=0.7', OM),
]


@pytest.mark.parametrize(("accept", "expected"), CASES)
def test_negotiate(accept: str | None, expected: ExpositionFormat | None) -> None:
    assert negotiate(accept) == expected


@pytest.mark.parametrize(
    ("accept", "status", "content_type"),
    [
        (None, 200, TEXT.content_type),
        ("*/*", 200, TEXT.content_type),
        ("text/plain", 200, TEXT.content_type),
        ("application/openmetrics-text", 200, OM.content_type),
        ("application/openmetrics-text;q=0.5, text/plain;q=0.9", 200, TEXT.content_type),
        (PROMETHEUS_3_SCRAPE, 200, OM.content_type),
        ("text/plain;version=1.0.0", 406, "application/problem+json"),
        ("application/json", 406, "application/problem+json"),
    ],
)
async def test_metrics_endpoint_negotiates(
    actuator_client: Any, accept: str | None, status: int, content_type: str
) -> None:
    client = await actuator_client()
    headers = {} if accept is None else {"Accept": accept}
    response = await client.get("/actuator/metrics", headers=headers, skip_auto_headers={"Accept"})
    assert response.status == status
    assert response.headers["Content-Type"] == content_type
    assert response.headers["Vary"] == "Accept"
    if status == 406:
        body = await response.json(content_type=None)
        assert body["code"] == "not_acceptable"
        assert body["status"] == 406
        assert body["type"] == "about:blank"
        assert body["title"] == "Not Acceptable"
        assert TEXT.content_type in body["detail"]
