"""The package face imports no web framework: a fresh interpreter's ``import service_actuator``
(or ``service_actuator.core``, ``service_actuator.http_metrics``) leaves ``aiohttp`` out of
``sys.modules``; only ``service_actuator.aiohttp`` loads it."""

from __future__ import annotations

import pytest

from tests.actuator.fresh import REPO_ROOT, run_fresh

PROBE = """
import importlib, json, sys
module = importlib.import_module(sys.argv[1])
print(json.dumps({
    "file": module.__file__,
    "web_frameworks": sorted(
        name for name in sys.modules
        if name.split(".")[0] in {"aiohttp", "flask", "starlette", "fastapi", "django"}
    ),
}))
"""


def imported_frameworks(module: str) -> list[str]:
    """The web-framework modules in ``sys.modules`` after a fresh interpreter imports ``module``."""
    result = run_fresh(PROBE, module)
    assert result["file"].startswith(str(REPO_ROOT / "service_actuator"))
    frameworks: list[str] = result["web_frameworks"]
    return frameworks


@pytest.mark.slow
@pytest.mark.parametrize(
    "module",
    ["service_actuator", "service_actuator.core", "service_actuator.http_metrics"],
)
def test_the_package_face_loads_no_web_framework(module: str) -> None:
    assert imported_frameworks(module) == []


@pytest.mark.slow
def test_the_aiohttp_adapter_does_load_aiohttp() -> None:
    # The probe sees a framework when one is imported, so the empty lists above mean something.
    assert "aiohttp" in imported_frameworks("service_actuator.aiohttp")
