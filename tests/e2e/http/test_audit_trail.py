"""The audit trail over HTTP (docs/reference/operations.md): every action of the service leaves its
audit row — every type of ``AUDIT_EVENT_TYPES`` — and no row holds a password, token, hash, TOTP
secret or code the test used; a login writes one row and a refresh one. On SQLite and PostgreSQL
with a real SMTP server (the email flows write rows too)."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pyotp
import pytest
from aiohttp.test_utils import TestClient

from application.shared.steps import hash_token
from domain.audit import AUDIT_EVENT_TYPES, AuditEvent, AuditQuery
from domain.oidc import Consent
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, bearer, container_of
from tests.e2e.http.test_oauth_http import basic
from tests.e2e.oidc_helpers import (
    ORIGIN,
    auth_params,
    code_via_browser,
    csrf_of,
    exchange,
    pkce,
    register_client,
    sign_in,
)
from tests.smtp import SmtpSink, smtp_env, smtp_server, token_of
from tests.webauthn_authenticator import SoftAuthenticator, b64url_decode

FEDERATED = {"identity.linked", "identity.unlinked"}
"""The types this walk cannot produce without an upstream provider (asserted elsewhere)."""
BACKCHANNEL = {"oidc.backchannel_logout_sent", "oidc.backchannel_logout_failed"}
"""The types of back-channel logout deliveries, which need a relying party's receiver: asserted
by tests/e2e/http/test_backchannel_logout.py and tests/unit/application/shared/
test_outbox_worker.py."""
PAGE_ONLY = {"mfa.recovery_codes_regenerated"}
"""New recovery codes are made on the account page only (no JSON route): asserted by
tests/e2e/http/test_account_security_http.py."""
WEBHOOKS = {"webhook.created", "webhook.updated", "webhook.deleted", "webhook.secret_rotated",
            "webhook.disabled"}  # fmt: skip
"""The types of webhook endpoints: asserted by tests/e2e/http/test_webhooks_http.py and
tests/unit/application/integration/test_webhook_delivery.py (``webhook.disabled`` needs days of
failing deliveries)."""

__all__ = ["smtp_server"]  # the fixture, for pytest

NEW_PASSWORD = "a brand new passphrase"
RESET_PASSWORD = "the passphrase after reset"
ROOT, ALICE, BOB, CAROL = (f"{n}@example.com" for n in ("root", "alice", "bob", "carol"))
DAVE, ERIN, NEW_ALICE = (f"{n}@example.com" for n in ("dave", "erin", "alice.new"))
AGENT = "audit-trail-test/1.0"
T_GRANT = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend (rows do not depend on the alg)."""
    return request.param  # type: ignore[no-any-return]


def _config(path: Path, ttl: int) -> str:
    path.write_text(textwrap.dedent(f"[auth]\naccess_token_ttl = {ttl}\n"), encoding="utf-8")
    return str(path)


async def rows(client: TestClient, query: AuditQuery | None = None) -> list[AuditEvent]:
    """Every audit row in the app's storage, newest first (read through the port)."""
    async with container_of(client).storage().begin() as uow:
        return await uow.audit.list_page(query or AuditQuery(), None, 10_000)


class Walk:
    """Drives the app over HTTP and keeps every secret it handles, to search the rows for."""

    def __init__(self, client: TestClient, sink: SmtpSink) -> None:
        self.client = client
        self.sink = sink
        self.secrets: set[str] = {PASSWORD, NEW_PASSWORD, RESET_PASSWORD}

    async def call(
        self, method: str, path: str, body: Any = None, token: str | None = None, status: int = 200
    ) -> Any:
        headers = {"User-Agent": AGENT, **(bearer(token) if token else {})}
        resp = await self.client.request(method, path, json=body, headers=headers)
        assert resp.status == status, (method, path, await resp.text())
        if not resp.content_type.endswith("json"):
            return None
        answer = await resp.json()
        self.keep(answer)
        return answer

    def keep(self, answer: Any) -> None:
        """Remember every token, secret and code an answer carried."""
        if isinstance(answer, dict):
            for key in ("access_token", "refresh_token", "mfa_token", "secret", "otpauth_uri"):
                if isinstance(answer.get(key), str):
                    self.secrets.add(answer[key])
            self.secrets.update(answer.get("recovery_codes", []))

    async def login(self, email: str, password: str = PASSWORD, status: int = 200) -> Any:
        return await self.call(
            "POST", "/login", {"email": email, "password": password}, status=status
        )

    async def mailed_token(self, address: str, count: int) -> str:
        token = token_of(await self.sink.wait_for(address, count))
        self.secrets.add(token)
        return token


def _wrong_code(secret: str) -> str:
    """A six-digit code outside the ±1 step window of now."""
    totp, now = pyotp.TOTP(secret), datetime.now(UTC)
    window = {totp.at(now + timedelta(seconds=d)) for d in (-60, -30, 0, 30, 60)}
    return next(c for c in (f"{n:06d}" for n in range(1_000_000)) if c not in window)


async def test_every_action_leaves_its_row_and_no_row_holds_a_secret(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int], tmp_path: Path
) -> None:
    sink, port = smtp_server
    config = _config(tmp_path / "authsvc.toml", 600)
    env = {**smtp_env(port), "AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "3"}
    client = await make_client(env, config_path=config)
    client.session.headers["User-Agent"] = AGENT  # the hosted pages' requests too
    w = Walk(client, sink)
    root_id = (await container_of(client).create_superadmin()(ROOT, PASSWORD)).user.id
    root = (await w.login(ROOT))["access_token"]  # login.succeeded

    alice = await w.call("POST", "/register", {"email": ALICE, "password": PASSWORD}, status=201)
    await w.call("POST", "/email/verify", {"token": await w.mailed_token(ALICE, 1)}, status=204)
    await w.login(ALICE, "not the password", status=401)  # login.failed (wrong_password)
    await w.login("nobody@example.com", status=401)  # login.failed (unknown_email)
    for _ in range(3):
        await w.login(CAROL, "wrong", status=401)
    await w.login(CAROL, "wrong", status=429)  # login.rate_limited

    pair = await w.login(ALICE)
    rotated = await w.call("POST", "/refresh", {"refresh_token": pair["refresh_token"]})
    await w.call("POST", "/refresh", {"refresh_token": pair["refresh_token"]}, status=401)  # reuse
    pair = await w.login(ALICE)
    await w.call("POST", "/logout", {"refresh_token": pair["refresh_token"]}, status=204)
    access = (await w.login(ALICE))["access_token"]
    await w.call("POST", "/me/password", {"old_password": PASSWORD, "new_password": NEW_PASSWORD},
                 access, status=204)  # fmt: skip
    await w.call("POST", "/password/forgot", {"email": ALICE}, status=202)
    token = await w.mailed_token(ALICE, 2)
    await w.call("POST", "/password/reset", {"token": token, "new_password": RESET_PASSWORD},
                 status=204)  # fmt: skip

    access = (await w.login(ALICE, RESET_PASSWORD))["access_token"]
    enrolment = await w.call("POST", "/me/mfa/totp", {"password": RESET_PASSWORD}, access)
    code = pyotp.TOTP(enrolment["secret"]).now()
    w.secrets.add(code)
    codes = (await w.call("POST", "/me/mfa/totp/confirm", {"code": code}, access))["recovery_codes"]
    challenge = (await w.login(ALICE, RESET_PASSWORD, status=401))["mfa_token"]
    wrong = _wrong_code(enrolment["secret"])
    await w.call("POST", "/login/mfa", {"mfa_token": challenge, "code": wrong}, status=401)
    access = (await w.call("POST", "/login/mfa", {"mfa_token": challenge, "code": codes[0]}))[
        "access_token"
    ]
    await w.call("DELETE", "/me/mfa", {"password": RESET_PASSWORD}, access, status=204)
    started = await w.call("POST", "/me/passkeys/registration/options",
                           {"password": RESET_PASSWORD}, access)  # fmt: skip
    response = SoftAuthenticator("ES256").register(started["options"], "http://localhost:8080")
    passkey = await w.call("POST", "/me/passkeys", {"ceremony_id": started["ceremony_id"],
                                                    "credential": response}, access, status=201)  # fmt: skip
    handle = b64url_decode(started["options"]["user"]["id"])
    device = SoftAuthenticator("ES256")
    started = await w.call("POST", "/me/passkeys/registration/options",
                           {"password": RESET_PASSWORD}, access)  # fmt: skip
    response = device.register(started["options"], "http://localhost:8080")
    await w.call("POST", "/me/passkeys", {"ceremony_id": started["ceremony_id"],
                                          "credential": response}, access, status=201)  # fmt: skip
    for count, status in ((5, 200), (5, 401)):  # login.succeeded (passkey), then a clone
        begun = await w.call("POST", "/login/passkey/options", {})
        answer = device.assert_(begun["options"], "http://localhost:8080", user_handle=handle,
                                count=count)  # fmt: skip
        await w.call("POST", "/login/passkey", {"ceremony_id": begun["ceremony_id"],
                                                "credential": answer}, status=status)  # fmt: skip
    await w.call("DELETE", f"/me/passkeys/{passkey['id']}", {"password": RESET_PASSWORD}, access,
                 status=204)  # fmt: skip

    await _code_flow(w)
    await _device_flow(w)

    bob = await w.call("POST", "/register", {"email": BOB, "password": PASSWORD}, status=201)
    await w.call("PUT", f"/users/{alice['id']}/role", {"role": "operator"}, root)
    await w.call("PATCH", f"/users/{bob['id']}", {"disabled": True}, root)
    await w.call("PATCH", f"/users/{bob['id']}", {"disabled": False}, root)
    group = await w.call("POST", "/groups", {"name": "auditors"}, root, status=201)
    await w.call("PATCH", f"/groups/{group['id']}", {"name": "auditors-2"}, root)
    member = f"/groups/{group['id']}/members/{alice['id']}"
    await w.call("PUT", member, token=root, status=204)
    await w.call("DELETE", member, token=root, status=204)
    await w.call("DELETE", f"/groups/{group['id']}", token=root, status=204)
    await w.call("PATCH", f"/users/{bob['id']}", {"org_id": "elsewhere"}, root)
    await w.call("DELETE", f"/users/{bob['id']}", token=root, status=204)
    svc = await w.call("POST", "/oauth/clients", {"name": "svc", "scopes": ["read"]}, root,
                       status=201)  # fmt: skip
    rotated_secret = (await w.call("POST", f"/oauth/clients/{svc['client_id']}/secret",
                                   token=root))["client_secret"]  # fmt: skip
    for secret in (svc["client_secret"], rotated_secret):
        w.secrets.update((secret, hash_token(secret)))
    creds = basic(svc["client_id"], rotated_secret)
    resp = await client.post("/oauth/token", data={"grant_type": "client_credentials"},
                             headers={**creds, "User-Agent": AGENT})  # fmt: skip
    machine_token = (await resp.json())["access_token"]
    w.secrets.add(machine_token)
    resp = await client.post("/oauth/revoke", data={"token": machine_token},
                             headers={**creds, "User-Agent": AGENT})  # fmt: skip
    assert resp.status == 200
    resp = await client.post("/oauth/token", data={"grant_type": "client_credentials"},
                             headers={**basic(svc["client_id"], "wrong"), "User-Agent": AGENT})  # fmt: skip
    assert resp.status == 401
    async with container_of(client).storage().begin() as uow:  # granted by the provider's flow
        await uow.consents.grant(Consent(alice["id"], svc["client_id"], ("openid",), T_GRANT))
        await uow.commit()
    access = (await w.login(ALICE, RESET_PASSWORD))["access_token"]
    await w.call("DELETE", f"/me/consents/{svc['client_id']}", token=access, status=204)
    await w.call("PATCH", f"/oauth/clients/{svc['client_id']}", {"disabled": True}, root)
    await w.call("DELETE", f"/oauth/clients/{svc['client_id']}", token=root, status=204)
    # Invitations (docs/reference/invitations.md): created, resent, revoked; another accepted.
    dave = await w.call("POST", "/invitations", {"email": DAVE, "role": "viewer"}, root,
                        status=201)  # fmt: skip
    await w.call("POST", f"/invitations/{dave['id']}/resend", token=root)
    await w.mailed_token(DAVE, 2)  # both links are secrets no row may hold
    await w.call("DELETE", f"/invitations/{dave['id']}", token=root, status=204)
    await w.call("POST", "/invitations", {"email": ERIN, "role": "viewer"}, root, status=201)
    link = await w.mailed_token(ERIN, 1)
    await client.get("/ui/invitation", params={"token": link})  # the CSRF cookie
    form = {"token": link, "password": PASSWORD, "password_again": PASSWORD,
            "csrf_token": csrf_of(client)}  # fmt: skip
    resp = await client.post("/ui/invitation", data=form, headers={**ORIGIN, "User-Agent": AGENT},
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 303, await resp.text()
    # A new email address (docs/reference/accounts.md): requested, then confirmed by its link.
    await w.call("POST", "/me/email", {"new_email": NEW_ALICE, "password": RESET_PASSWORD},
                 access, status=202)  # fmt: skip
    await w.call("POST", "/email/change", {"token": await w.mailed_token(NEW_ALICE, 1)},
                 status=204)  # fmt: skip
    _config(tmp_path / "authsvc.toml", 300)
    await w.call("POST", "/actuator/refresh", token=root)  # config.changed

    found = await rows(client)
    # Linking needs an upstream provider: identity.linked / identity.unlinked rows are asserted
    # by tests/e2e/http/test_federation_http.py (link and unlink against panva oidc-provider).
    assert {r.type for r in found} == (
        set(AUDIT_EVENT_TYPES) - FEDERATED - BACKCHANNEL - PAGE_ONLY - WEBHOOKS
    )
    assert [r.id for r in found] == sorted((r.id for r in found), reverse=True)
    by_type = {t: [r for r in found if r.type == t] for t in AUDIT_EVENT_TYPES}
    role = by_type["user.role_changed"][0]
    assert (role.actor_id, role.user_id, role.org_id) == (root_id, alice["id"], alice["org_id"])
    assert role.details_dict() == {"old_role": "viewer", "new_role": "operator"}
    assert by_type["user.moved"][0].details_dict() == {"old_org_id": bob["org_id"]}
    assert by_type["user.moved"][0].org_id == "elsewhere"
    assert by_type["login.rate_limited"] and by_type["token.reuse_detected"]
    assert {r.details_dict()["reason"] for r in by_type["login.failed"]} >= {
        "wrong_password",
        "unknown_email",
    }
    assert by_type["mfa.failed"][0].details_dict() == {"reason": "wrong_code"}
    hosted = [r for r in by_type["login.succeeded"] if r.details_dict().get("client_id")]
    assert [r.details_dict()["method"] for r in hosted] == ["password"]  # the hosted page
    assert by_type["config.changed"][0].details_dict() == {"changed": "auth"}
    assert by_type["oauth.consent_revoked"][0].details_dict() == {
        "client_id": svc["client_id"],
        "sessions_ended": 0,
    }
    assert by_type["oauth.denied"][0].details_dict()["reason"] == "organization"
    assert by_type["client.updated"][0].details_dict() == {
        "client_id": svc["client_id"],
        "fields": "disabled",
    }
    # Rows written while serving a request name where it came from; the command line's none.
    by_cli = [r for r in found if r.type == "user.registered" and r.user_id == root_id]
    assert [(r.client_address, r.user_agent) for r in by_cli] == [(None, None)]
    served = [r for r in found if r not in by_cli]
    assert {(r.client_address, r.user_agent) for r in served} == {("127.0.0.1", AGENT)}

    # No password, token, hash, TOTP secret or code in any row (ids and reasons only).
    async with container_of(client).storage().begin() as uow:
        for address in (ROOT, NEW_ALICE):  # alice moved to her new address
            user = await uow.users.get_by_email(address)
            assert user is not None
            w.secrets.add(user.password_hash)
    w.secrets.update([wrong, *codes, rotated["access_token"]])
    dumped = json.dumps([_as_dict(r) for r in found])
    leaked = sorted(s for s in w.secrets if s in dumped)
    assert leaked == []


async def _code_flow(w: Walk) -> None:
    """The code flow (docs/reference/oauth-and-oidc.md, research §6 OP-02, OP-12, OP-25, OP-28): a
    hosted login with consent allowed (login.succeeded, oauth.consent_granted, oauth.authorized),
    the code used twice (oauth.code_reused), consent denied (oauth.consent_denied), another
    organization's client refused (oauth.denied), consent revoked (oauth.consent_revoked, OP-25),
    RP-initiated logout (oidc.logout)."""
    app = await register_client(w.client)
    assert app.secret is not None
    w.secrets.update((app.secret, hash_token(app.secret)))
    verifier, challenge = pkce()
    w.secrets.add(verifier)
    callback = await code_via_browser(w.client, app, auth_params(app, challenge), ALICE,
                                      RESET_PASSWORD)  # fmt: skip
    w.secrets.add(callback["code"])
    for cookie in w.client.session.cookie_jar:
        w.secrets.add(cookie.value)
    resp = await exchange(w.client, app, callback["code"], verifier)
    assert resp.status == 200, await resp.text()
    tokens = await resp.json()
    w.keep(tokens)
    w.secrets.add(tokens["id_token"])
    resp = await exchange(w.client, app, callback["code"], verifier)  # oauth.code_reused
    assert resp.status == 400
    again = auth_params(app, challenge, prompt="consent")
    denied = await code_via_browser(w.client, app, again, ALICE, RESET_PASSWORD, "deny")
    assert denied["error"] == "access_denied"
    foreign = await register_client(w.client, org_id="elsewhere")  # another organization's
    assert foreign.secret is not None
    w.secrets.update((foreign.secret, hash_token(foreign.secret)))
    refused = await code_via_browser(w.client, foreign, auth_params(foreign, challenge), ALICE,
                                     RESET_PASSWORD)  # fmt: skip
    assert refused["error"] == "access_denied"  # oauth.denied
    if "oauth.consent_revoked" in AUDIT_EVENT_TYPES:  # with /me/consents (branch oidc-data)
        access = (await w.login(ALICE, RESET_PASSWORD))["access_token"]
        await w.call("DELETE", f"/me/consents/{app.id}", token=access, status=204)
    resp = await w.client.get("/oauth/logout", params={"id_token_hint": tokens["id_token"]})
    assert resp.status == 200  # oidc.logout; the signed-out page (no post-logout URI)


async def _device_flow(w: Walk) -> None:
    """The device flow (RFC 8628; docs/reference/oauth-and-oidc.md): a wrong user code
    (oauth.device_code_refused), one request approved (oauth.device_approved; its tokens polled),
    one denied (oauth.device_denied); no code or token in any row."""
    app = await register_client(w.client, public=True, redirect_uris=())
    device = "urn:ietf:params:oauth:grant-type:device_code"
    async with container_of(w.client).storage().begin() as uow:
        await uow.clients.update(attrs.evolve(app.record, grant_types=(device,)))
        await uow.commit()
    started = []
    for _ in range(2):
        resp = await w.client.post("/oauth/device_authorization", data={"client_id": app.id})
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        w.secrets.update(
            (body["device_code"], body["user_code"], body["user_code"].replace("-", ""))
        )
        started.append(body)
    await sign_in(w.client, "/ui/device", ALICE, RESET_PASSWORD)
    resp = await w.client.get("/ui/device", params={"user_code": "BCDF-GHJK"})
    assert resp.status == 400  # oauth.device_code_refused
    for body, decision in zip(started, ("allow", "deny"), strict=True):
        form = {
            "user_code": body["user_code"],
            "decision": decision,
            "csrf_token": csrf_of(w.client),
        }
        resp = await w.client.post("/ui/device", data=form, headers=ORIGIN, allow_redirects=False)
        assert resp.status == 303, await resp.text()
    resp = await w.client.post("/oauth/token", data={
        "client_id": app.id, "grant_type": device, "device_code": started[0]["device_code"]})  # fmt: skip
    assert resp.status == 200, await resp.text()
    w.keep(await resp.json())


def _as_dict(row: AuditEvent) -> dict[str, Any]:
    return {
        "id": row.id,
        "type": row.type,
        "actor_id": row.actor_id,
        "user_id": row.user_id,
        "org_id": row.org_id,
        "client_address": row.client_address,
        "user_agent": row.user_agent,
        "details": row.details_dict(),
    }


async def test_a_login_writes_one_row_and_a_refresh_one(make_client: MakeClient) -> None:
    client = await make_client()
    w = Walk(client, SmtpSink())
    await w.call("POST", "/register", {"email": ALICE, "password": PASSWORD}, status=201)
    before = len(await rows(client))
    pair = await w.login(ALICE)
    after_login = await rows(client)
    assert [r.type for r in after_login[: len(after_login) - before]] == ["login.succeeded"]
    await w.call("POST", "/refresh", {"refresh_token": pair["refresh_token"]})
    after_refresh = await rows(client)
    assert len(after_refresh) == len(after_login) + 1
    refreshed = after_refresh[0]
    assert refreshed.type == "token.refreshed"
    assert refreshed.details_dict()["session_id"] == after_login[0].details_dict()["session_id"]
    await w.login(ALICE, "wrong", status=401)
    assert len(await rows(client)) == len(after_refresh) + 1
