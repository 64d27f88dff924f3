"""``authsvc clients …`` (docs/reference/oauth-and-oidc.md) run in-process through
``entrypoints.cli.main`` over a SQLite database: create prints the secret once (the stored hash
matches it), list, rotate-secret, disable, enable and delete change the registry, with audit rows by
``cli``; create takes the code-flow options of docs/reference/oauth-and-oidc.md (a public client, a
confidential code-flow client) and refuses a bad one naming the field."""

from __future__ import annotations

import re

import pytest

from application.shared.steps import hash_token
from domain.audit import AuditQuery
from domain.clients import Client
from tests.e2e.processes.test_cli import env, one_error_line, run, with_container

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


# ------------------------------------------------------------------------------ the code flow
#  docs/reference/oauth-and-oidc.md: "authsvc clients create takes the same options" as POST
# /oauth/clients.


def _created(out: str) -> tuple[str, str | None]:
    """The ``client_id`` and ``client_secret`` (None: none printed) of a create's stdout."""
    client_id = re.search(r"^client_id: ([0-9a-f]{32})$", out, re.M)
    secret = re.search(r"^client_secret: (\S+)$", out, re.M)
    assert client_id is not None, out
    return client_id.group(1), secret.group(1) if secret else None


def test_a_public_code_flow_client(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """``--public`` with the code-flow grants, a loopback and a private-use redirect URI and a
    post-logout URI: no secret is printed or kept, the method is ``none``, consent is asked."""
    assert run("clients", "create", "spa", "--public",
               "--grant-type", "authorization_code", "--grant-type", "refresh_token",
               "--redirect-uri", "http://127.0.0.1/cb", "--redirect-uri", "com.example.app:/cb",
               "--post-logout-redirect-uri", "http://127.0.0.1/signed-out") == 0  # fmt: skip
    captured = capsys.readouterr()
    client_id, secret = _created(captured.out)
    assert secret is None and "client_secret" not in captured.out
    assert "a public client: no secret" in captured.err
    stored = _client(client_id)
    assert stored is not None
    assert (stored.public, stored.secret_hash, stored.token_endpoint_auth_method) == (
        True,
        "",
        "none",
    )
    assert stored.grant_types == ("authorization_code", "refresh_token")
    assert stored.redirect_uris == ("http://127.0.0.1/cb", "com.example.app:/cb")
    assert stored.post_logout_redirect_uris == ("http://127.0.0.1/signed-out",)
    assert stored.skip_consent is False
    # --public alone: the code grant by default (it then needs a redirect URI).
    assert (
        run("clients", "create", "app", "--public", "--redirect-uri", "https://a.example/cb") == 0
    )
    only = _client(_created(capsys.readouterr().out)[0])
    assert only is not None and only.grant_types == ("authorization_code",)


def test_a_confidential_code_flow_client(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A first-party server app: its secret printed once (the stored hash matches), every
    code-flow option kept as given (``--skip-consent`` and ``--all-organizations`` too: the
    command line, like a superadmin, may set them), the grants in canonical order; audited as by ``cli``."""
    assert run("clients", "create", "portal", "--scope", "read",
               "--grant-type", "refresh_token", "--grant-type", "authorization_code",
               "--redirect-uri", "https://portal.example.com/cb",
               "--post-logout-redirect-uri", "https://portal.example.com/bye",
               "--token-endpoint-auth-method", "client_secret_post", "--skip-consent",
               "--all-organizations",
               "--logo-uri", "https://portal.example.com/logo.png",
               "--policy-uri", "https://portal.example.com/privacy",
               "--tos-uri", "https://portal.example.com/terms",
               "--id-token-signed-response-alg", "RS256") == 0  # fmt: skip
    client_id, secret = _created(capsys.readouterr().out)
    stored = _client(client_id)
    assert stored is not None and secret is not None
    assert stored.secret_hash == hash_token(secret) and stored.public is False
    assert stored.grant_types == ("authorization_code", "refresh_token")
    assert stored.redirect_uris == ("https://portal.example.com/cb",)
    assert stored.post_logout_redirect_uris == ("https://portal.example.com/bye",)
    assert (stored.token_endpoint_auth_method, stored.skip_consent) == ("client_secret_post", True)
    assert stored.all_organizations is True  # the command line may set it (ADR 0036)
    assert (stored.logo_uri, stored.policy_uri, stored.tos_uri) == (
        "https://portal.example.com/logo.png", "https://portal.example.com/privacy",
        "https://portal.example.com/terms",
    )  # fmt: skip
    assert (stored.id_token_signed_response_alg, stored.scopes) == ("RS256", ("read",))
    # Without the options: a machine client as before (client credentials, basic, consent).
    assert run("clients", "create", "batch", "--scope", "read") == 0
    plain = _client(_created(capsys.readouterr().out)[0])
    assert plain is not None
    assert (plain.grant_types, plain.redirect_uris, plain.token_endpoint_auth_method,
            plain.skip_consent) == (("client_credentials",), (), "client_secret_basic", False)  # fmt: skip
    assert plain.all_organizations is False

    async def rows(container):  # type: ignore[no-untyped-def]
        async with container.storage().begin() as uow:
            return await uow.audit.list_page(AuditQuery(), None, 100)

    created = [r for r in with_container(rows) if r.type == "client.created"]
    assert {r.actor_id for r in created} == {"cli"} and secret not in str(created)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        pytest.param(["--grant-type", "authorization_code", "--redirect-uri",
                      "http://app.example.com/cb"], "redirect_uris", id="http-not-loopback"),
        pytest.param(["--grant-type", "authorization_code", "--redirect-uri",
                      "https://app.example.com/cb#frag"], "redirect_uris", id="fragment"),
        pytest.param(["--grant-type", "authorization_code", "--redirect-uri", "/cb"],
                     "redirect_uris", id="relative"),
        pytest.param(["--grant-type", "authorization_code"], "redirect_uris",
                     id="code-grant-without-redirect-uri"),
        pytest.param(["--public"], "redirect_uris", id="public-without-redirect-uri"),
        pytest.param(["--grant-type", "authorization_code", "--redirect-uri",
                      "https://app.example.com/cb", "--post-logout-redirect-uri",
                      "http://app.example.com/out"], "post_logout_redirect_uris",
                     id="post-logout-http"),
        pytest.param(["--grant-type", "implicit"], "grant_types", id="unknown-grant"),
        pytest.param(["--grant-type", "refresh_token"], "grant_types",
                     id="refresh-without-code"),
        pytest.param(["--public", "--grant-type", "client_credentials"], "grant_types",
                     id="public-client-credentials"),
        pytest.param(["--public", "--redirect-uri", "https://app.example.com/cb",
                      "--token-endpoint-auth-method", "client_secret_basic"],
                     "token_endpoint_auth_method", id="public-with-a-secret-method"),
        pytest.param(["--grant-type", "authorization_code", "--redirect-uri",
                      "https://app.example.com/cb", "--token-endpoint-auth-method", "none"],
                     "token_endpoint_auth_method", id="confidential-with-none"),
        pytest.param(["--logo-uri", "ftp://app.example.com/logo.png"], "logo_uri", id="logo"),
        pytest.param(["--tos-uri", "http://app.example.com/terms"], "tos_uri", id="tos-http"),
        pytest.param(["--id-token-signed-response-alg", "HS256"],
                     "id_token_signed_response_alg", id="alg-not-configured"),
    ],
)  # fmt: skip
def test_a_bad_code_flow_option_exits_1_naming_the_field(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], options: list[str], field: str
) -> None:
    """A refused option: exit status 1, one line ``authsvc: <field>: …`` on stderr, nothing
    on stdout and no client registered."""
    assert run("clients", "create", "app", *options) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert one_error_line(captured.err).startswith(f"authsvc: {field}: "), captured.err
    assert run("clients", "list") == 0 and capsys.readouterr().out == ""


def test_an_unknown_auth_method_is_a_usage_error(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--token-endpoint-auth-method`` takes only the four methods: argparse's usage error
    (exit status 2) names the option and the choices."""
    with pytest.raises(SystemExit) as exited:
        run("clients", "create", "app", "--token-endpoint-auth-method", "client_secret_jwt")
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--token-endpoint-auth-method" in err and "client_secret_basic" in err


def test_trust_sets_and_clears_the_first_party_fields(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``clients trust`` (the operator, like a superadmin; docs/adr/0036): ``--skip-consent``,
    ``--all-organizations`` and their ``--no-`` forms change only what is given, audited
    ``client.updated`` by ``cli``; nothing given, or an unknown client, exits 1."""
    assert run("clients", "create", "portal", "--grant-type", "authorization_code",
               "--redirect-uri", "https://portal.example.com/cb") == 0  # fmt: skip
    client_id, _ = _created(capsys.readouterr().out)
    assert run("clients", "trust", client_id, "--skip-consent", "--all-organizations") == 0
    assert "skip_consent=true  all_organizations=true" in capsys.readouterr().out
    stored = _client(client_id)
    assert stored is not None and (stored.skip_consent, stored.all_organizations) == (True, True)
    assert run("clients", "trust", client_id, "--no-all-organizations") == 0
    stored = _client(client_id)
    assert stored is not None and (stored.skip_consent, stored.all_organizations) == (True, False)
    capsys.readouterr()
    assert run("clients", "trust", client_id) == 1
    assert run("clients", "trust", "f" * 32, "--skip-consent") == 1
    assert "not found" in capsys.readouterr().err

    async def rows(container):  # type: ignore[no-untyped-def]
        async with container.storage().begin() as uow:
            return await uow.audit.list_page(AuditQuery(type="client.updated"), None, 100)

    updated = with_container(rows)
    assert sorted(r.details_dict()["fields"] for r in updated) == [
        "all_organizations", "all_organizations,skip_consent"]  # fmt: skip
    assert {r.actor_id for r in updated} == {"cli"}


def test_a_device_client_and_a_private_key_jwt_client_that_requires_par(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The device grant (RFC 8628) for a public client, and ``private_key_jwt`` with an inline
    JWK Set and ``--require-pushed-authorization-requests`` (RFC 7523, RFC 9126); a private key
    in ``--jwks`` exits 1 naming the field."""
    device = "urn:ietf:params:oauth:grant-type:device_code"
    assert run("clients", "create", "tv", "--public", "--grant-type", device,
               "--grant-type", "refresh_token") == 0  # fmt: skip
    tv = _client(_created(capsys.readouterr().out)[0])
    assert tv is not None and tv.grant_types == ("refresh_token", device) and tv.public
    jwks = '{"keys": [{"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "BBBB", "kid": "k"}]}'
    assert run("clients", "create", "kiosk", "--grant-type", "authorization_code",
               "--redirect-uri", "https://k.example/cb",
               "--token-endpoint-auth-method", "private_key_jwt", "--jwks", jwks,
               "--require-pushed-authorization-requests") == 0  # fmt: skip
    kiosk = _client(_created(capsys.readouterr().out)[0])
    assert kiosk is not None and kiosk.require_pushed_authorization_requests
    assert kiosk.token_endpoint_auth_method == "private_key_jwt"
    assert kiosk.jwks is not None and '"kid":"k"' in kiosk.jwks
    private = jwks.replace('"kid": "k"', '"kid": "k", "d": "CCCC"')
    assert run("clients", "create", "bad", "--grant-type", "authorization_code",
               "--redirect-uri", "https://k.example/cb",
               "--token-endpoint-auth-method", "private_key_jwt", "--jwks", private) == 1  # fmt: skip
    assert "jwks" in one_error_line(capsys.readouterr().err)
