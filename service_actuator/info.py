"""Info: the :class:`InfoContributor` port and the ``/info`` document (app, git, python).

Spring Boot Actuator's ``/actuator/info``: ``app`` (name and version from the installed
distribution's metadata), ``git`` (from a Spring ``git.properties`` or a JSON file, and the
``GIT_BRANCH``/``GIT_COMMIT``/``GIT_COMMIT_TIME`` environment variables) and ``python``, then
whatever the contributors add, deep-merged in order.
"""

from __future__ import annotations

import copy
import inspect
import json
import logging
import os
import platform
from collections.abc import Awaitable, Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["InfoContributor", "assemble_info", "static_info"]

log = logging.getLogger("service_actuator")


@runtime_checkable
class InfoContributor(Protocol):
    """Adds to ``/info`` (Spring's ``InfoContributor``); the result is deep-merged into it.

    ``contribute()`` may be sync or async; it runs on the event loop, so keep it cheap. A
    contributor that raises or returns a non-mapping is logged and skipped.
    """

    def contribute(self) -> Mapping[str, Any] | Awaitable[Mapping[str, Any]]:
        """A mapping to merge into the info document."""
        ...


def _deep_merge(target: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        current = target.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _deep_merge(current, value)
        else:
            target[key] = copy.deepcopy(dict(value)) if isinstance(value, Mapping) else value


def _app_info(distribution: str) -> dict[str, Any]:
    try:
        meta = metadata.metadata(distribution)
    except metadata.PackageNotFoundError:
        log.warning("distribution %r is not installed; /info shows no version", distribution)
        return {"name": distribution, "version": "unknown"}
    return {"name": meta["Name"] or distribution, "version": meta["Version"] or "unknown"}


_GIT_ENV = {"GIT_BRANCH": ("branch",), "GIT_COMMIT": ("commit", "id")}
_GIT_PROPERTIES = {
    "git.branch": ("branch",),
    "git.commit.id": ("commit", "id"),
    "git.commit.id.full": ("commit", "id"),
    "git.commit.time": ("commit", "time"),
}


def _put(target: dict[str, Any], path: tuple[str, ...], value: str) -> None:
    for part in path[:-1]:
        target = target.setdefault(part, {})
    target[path[-1]] = value


def _git_info(
    environ: Mapping[str, str], git_file: str | os.PathLike[str] | None
) -> dict[str, Any]:
    git: dict[str, Any] = {}
    if git_file is not None:
        path = Path(git_file)
        try:
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".json":
                loaded = json.loads(text)
                if isinstance(loaded, dict):
                    git = loaded
            else:  # Spring's git.properties
                for line in text.splitlines():
                    key, sep, value = line.partition("=")
                    if sep and key.strip() in _GIT_PROPERTIES:
                        _put(git, _GIT_PROPERTIES[key.strip()], value.strip())
        except (OSError, ValueError):
            log.warning("cannot read git info from %s", path, exc_info=True)
    for variable, path_in_doc in (*_GIT_ENV.items(), ("GIT_COMMIT_TIME", ("commit", "time"))):
        if environ.get(variable):
            _put(git, path_in_doc, environ[variable])
    return git


def static_info(
    distribution: str | None,
    environ: Mapping[str, str],
    git_info_file: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The part of the info document fixed at start-up (read once).

    Returns:
        ``{"app": {"name", "version"}, "git": {...}, "python": {"version", "implementation"}}``.
        ``app`` only when ``distribution`` is given (version ``"unknown"`` if it is not
        installed). ``git`` only when something is known: a JSON file's object, or a
        ``git.properties`` file's ``branch`` / ``commit.id`` / ``commit.time``, overridden by
        the environment's ``GIT_BRANCH`` / ``GIT_COMMIT`` / ``GIT_COMMIT_TIME``; an unreadable
        ``git_info_file`` is logged and skipped.
    """
    document: dict[str, Any] = {}
    if distribution is not None:
        document["app"] = _app_info(distribution)
    git = _git_info(environ, git_info_file)
    if git:
        document["git"] = git
    document["python"] = {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
    }
    return document


async def assemble_info(
    static: Mapping[str, Any], contributors: Iterable[InfoContributor]
) -> dict[str, Any]:
    """A deep copy of ``static`` with each contributor's mapping deep-merged in, in order.

    A contributor that raises or returns no mapping is logged and skipped.
    """
    document = copy.deepcopy(dict(static))
    for contributor in contributors:
        try:
            contributed = contributor.contribute()
            if inspect.isawaitable(contributed):
                contributed = await contributed
        except Exception:
            log.warning("info contributor %r failed; skipped", contributor, exc_info=True)
            continue
        if not isinstance(contributed, Mapping):
            log.warning("info contributor %r returned no mapping; skipped", contributor)
            continue
        _deep_merge(document, contributed)
    return document
