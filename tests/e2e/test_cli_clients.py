"""``authsvc clients …`` (contract section 14) run in-process through ``entrypoints.cli.main``
over a SQLite database: create prints the secret once (the stored hash matches it), list,
rotate-secret, disable, enable and delete change the registry, with audit rows by ``cli``."""

from __future__ import annotations

import re

import pytest

from application.shared.steps import hash_token
from domain.audit import AuditQuery
from domain.clients import Client
from tests.e2e.test_cli import env, run, with_container

__all__ = ["env"]  # the fixture, for pytest


def _client(client_id: str) -> Client | None:
    async def get(container):  # type: ignore[no-untyped-def]
        async with container.storage().begin() as uow:
            return await uow.clients.get(client_id)

    return with_container(get)  # type: ignore[no-any-return]


def test_the_client_commands(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run("clients", "create", "billing", "--scope", "read", "--scope", "write",
               "--audience", "https://api.example.com", "--org", "acme") == 0  # fmt: skip
    out = capsys.readouterr().out
    client_id = re.search(r"client_id: ([0-9a-f]{32})", out).group(1)  # type: ignore[union-attr]
    secret = re.search(r"client_secret: (\S+)", out).group(1)  # type: ignore[union-attr]
    stored = _client(client_id)
    assert stored is not None and stored.secret_hash == hash_token(secret)
    assert (stored.org_id, stored.scopes, stored.audience) == ("acme", ("read", "write"),
                                                               ("https://api.example.com",))  # fmt: skip
    assert run("clients", "create", "other", "--scope", "read") == 0  # default organization
    capsys.readouterr()

    assert run("clients", "list", "--org", "acme") == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 1 and listed[0].startswith(client_id) and "enabled" in listed[0]
    assert run("clients", "rotate-secret", client_id) == 0
    new_secret = capsys.readouterr().out.split("client_secret: ")[1].strip()
    rotated = _client(client_id)
    assert (
        rotated is not None and rotated.secret_hash == hash_token(new_secret) != stored.secret_hash
    )
    assert run("clients", "disable", client_id) == 0 and "disabled" in capsys.readouterr().out
    assert _client(client_id).disabled  # type: ignore[union-attr]
    assert run("clients", "enable", client_id) == 0
    assert not _client(client_id).disabled  # type: ignore[union-attr]
    assert run("clients", "delete", client_id) == 0
    assert _client(client_id) is None
    assert run("clients", "delete", client_id) == 1  # not found
    assert "not found" in capsys.readouterr().err
    assert run("clients", "create", "bad", "--scope", "has space") == 1

    async def rows(container):  # type: ignore[no-untyped-def]
        async with container.storage().begin() as uow:
            return await uow.audit.list_page(AuditQuery(), None, 100)

    found = with_container(rows)
    assert {r.type for r in found} >= {"client.created", "client.secret_rotated",
                                       "client.updated", "client.deleted"}  # fmt: skip
    assert {r.actor_id for r in found} == {"cli"}
    assert secret not in str(found) and new_secret not in str(found)


def test_the_operator_names_any_audience_and_a_bad_resource_exits_2(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUTHSVC_OAUTH__RESOURCES",
                       '[{audience = "https://api.globex.example", scopes = ["read"], '
                       'org_id = "globex"}]')  # fmt: skip
    assert run("clients", "create", "svc", "--scope", "admin", "--audience",
               "https://api.globex.example", "--org", "acme") == 0  # fmt: skip
    client_id = re.search(r"client_id: ([0-9a-f]{32})", capsys.readouterr().out).group(1)  # type: ignore[union-attr]
    assert _client(client_id).audience == ("https://api.globex.example",)  # type: ignore[union-attr]
    monkeypatch.setenv("AUTHSVC_OAUTH__RESOURCES", '[{audience = "two words"}]')
    assert run("clients", "list") == 2
    assert capsys.readouterr().err.startswith("authsvc: invalid configuration: oauth.resources")
