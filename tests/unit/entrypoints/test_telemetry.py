"""Telemetry skips span work when spans go nowhere (``telemetry.exporter = "none"``) and records
when an exporter is set — also after a change at ``/actuator/refresh`` (``apply``)."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from entrypoints.config.infrastructure import TelemetrySettings
from entrypoints.telemetry import Telemetry, traced


class _UseCase:
    async def __call__(self) -> str:
        return "done"


async def test_no_exporter_means_no_span_work() -> None:
    telemetry = Telemetry.from_settings(TelemetrySettings(exporter="none"))
    assert telemetry.recording is False
    assert await traced(_UseCase(), "UseCase", telemetry)() == "done"


async def test_an_exporter_records_spans_and_apply_switches_it_off() -> None:
    exporter = InMemorySpanExporter()
    telemetry = Telemetry.with_exporter(exporter)
    assert telemetry.recording is True
    assert await traced(_UseCase(), "UseCase", telemetry)() == "done"
    assert [s.name for s in exporter.get_finished_spans()] == ["UseCase"]
    telemetry.apply(TelemetrySettings(exporter="none"))
    assert telemetry.recording is False
    await traced(_UseCase(), "UseCase", telemetry)()
    assert len(exporter.get_finished_spans()) == 1
