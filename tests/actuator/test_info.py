"""/actuator/info: app metadata, python, git (env or file), contributors merged."""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from service_actuator import Actuator, InfoContributor


class StaticContributor:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def contribute(self) -> dict[str, Any]:
        return self.data


class AsyncContributor:
    async def contribute(self) -> dict[str, Any]:
        return {"features": {"mldsa": True}}


class BrokenContributor:
    def contribute(self) -> dict[str, Any]:
        raise RuntimeError("boom")


class NotAMapping:
    def contribute(self) -> Any:
        return ["nope"]


async def test_info_document(actuator_client: Any) -> None:
    client = await actuator_client(
        distribution="aiohttp",
        info_contributors=[
            StaticContributor({"features": {"rbac": True}, "app": {"description": "x"}}),
            AsyncContributor(),
            BrokenContributor(),
            NotAMapping(),
        ],
    )
    response = await client.get("/actuator/info")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("application/json")
    body = await response.json()
    assert body == {
        "app": {"name": "aiohttp", "version": metadata.version("aiohttp"), "description": "x"},
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
        },
        "features": {"rbac": True, "mldsa": True},
    }


async def test_contributors_cannot_corrupt_static_info() -> None:
    actuator = Actuator(
        distribution="aiohttp",
        info_contributors=[StaticContributor({"app": {"name": "other"}})],
        environ={},
    )
    first = await actuator.collect_info()
    second = await actuator.collect_info()
    assert first["app"]["name"] == second["app"]["name"] == "other"
    first["python"]["version"] = "mutated"
    assert (await actuator.collect_info())["python"]["version"] == platform.python_version()


async def test_unknown_distribution() -> None:
    info = await Actuator(distribution="no-such-distribution-xyz", environ={}).collect_info()
    assert info["app"] == {"name": "no-such-distribution-xyz", "version": "unknown"}


async def test_without_distribution_no_app() -> None:
    info = await Actuator(environ={}).collect_info()
    assert "app" not in info
    assert "git" not in info
    assert set(info) == {"python"}


async def test_git_from_environment_read_at_construction() -> None:
    environ = {"GIT_COMMIT": "a1b2c3d4", "GIT_BRANCH": "main", "GIT_COMMIT_TIME": "2026-01-01"}
    actuator = Actuator(environ=environ)
    environ["GIT_COMMIT"] = "changed-later"
    info = await actuator.collect_info()
    assert info["git"] == {
        "branch": "main",
        "commit": {"id": "a1b2c3d4", "time": "2026-01-01"},
    }


async def test_git_properties_file(tmp_path: Path) -> None:
    path = tmp_path / "git.properties"
    path.write_text(
        "#Generated\ngit.branch=release\ngit.commit.id=ffee00\n"
        "git.commit.time=2026-02-03T04:05:06Z\ngit.dirty=false\n",
        encoding="utf-8",
    )
    info = await Actuator(git_info_file=path, environ={}).collect_info()
    assert info["git"] == {
        "branch": "release",
        "commit": {"id": "ffee00", "time": "2026-02-03T04:05:06Z"},
    }


async def test_git_json_file_and_env_override(tmp_path: Path) -> None:
    path = tmp_path / "git.json"
    path.write_text(json.dumps({"branch": "x", "commit": {"id": "111"}}), encoding="utf-8")
    info = await Actuator(git_info_file=path, environ={"GIT_COMMIT": "222"}).collect_info()
    assert info["git"] == {"branch": "x", "commit": {"id": "222"}}


async def test_missing_git_file_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    info = await Actuator(git_info_file=tmp_path / "absent.properties", environ={}).collect_info()
    assert "git" not in info
    assert "cannot read git info" in caplog.text


def test_contributor_protocol() -> None:
    assert isinstance(StaticContributor({}), InfoContributor)
    assert isinstance(AsyncContributor(), InfoContributor)
