"""Independent clients prove the OpenID Provider (issue 31; docs/reference/oauth-and-oidc.md, last
bullet; research oidc-provider.md §5 and OP-30).

panva's ``openid-client`` 6.8.9 (a confidential client with ``client_secret_basic``, a public
client, and a public client with DPoP), ``oauth4webapi`` 3.8.8 (a public client) and authlib's
Python client (confidential) run the whole authorization code flow with PKCE; the login is done
by Playwright driving Debian's Chromium.
The same scripts first run against panva's ``oidc-provider`` 9.13.3, a certified provider
(the harness self-test: a failure there is the harness's, not authsvc's), then against a real
``authsvc serve`` process. Each script ends with ``N passed, N failed``."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import jwt
import pytest
from aiosmtpd.controller import Controller
from cryptography.hazmat.primitives.asymmetric import ec
from playwright.async_api import Browser

from tests.e2e.servers import ROOT, Server, free_port
from tests.interop.driver import (
    DevInteractions,
    HostedPages,
    LoginSteps,
    ScriptRun,
    SignUpPages,
    UserAgent,
    chromium_browser,
    oidc_provider,
    run_script,
)
from tests.interop.rp_authlib import authlib_flow
from tests.pg import server_storage
from tests.smtp import SmtpSink, smtp_env, text_of

REDIRECT_URI = "http://127.0.0.1:8765/cb"
"""Registered for every test client; the browser step answers it, nothing listens there (a
loopback IP literal: authsvc matches it on any port, oidc-provider exactly)."""
POST_LOGOUT = "http://127.0.0.1:8765/signed-out"
STOPS = (REDIRECT_URI, POST_LOGOUT)
MODES = ("confidential", "public", "dpop")
FLOW_CHECKS = {"discovery", "authorization_code_grant", "id_token_claims", "userinfo", "refresh",
               "code_reuse_refused_and_revokes", "end_session", "prompt_none_after_logout"}  # fmt: skip
"""What ``rp_flow.mjs`` checks (``dpop_binding`` too in the DPoP mode)."""
AUTHLIB_CHECKS = {"discovery", "authorization_code_grant", "id_token_claims", "userinfo", "refresh"}
"""What ``rp_authlib.py`` checks."""
O4W_CHECKS = {"discovery", "validate_auth_response", "tampered_iss_refused",
              "authorization_code_grant", "id_token_claims", "userinfo"}  # fmt: skip
"""What ``rp_o4w.mjs`` checks."""

pytestmark = pytest.mark.slow


def flow_env(issuer: str, client: dict[str, str], mode: str, **extra: str) -> dict[str, str]:
    """The environment of ``rp_flow.mjs`` / ``rp_o4w.mjs``."""
    env = {"ISSUER": issuer, "CLIENT_ID": client["client_id"], "MODE": mode,
           "REDIRECT_URI": REDIRECT_URI, "POST_LOGOUT_REDIRECT_URI": POST_LOGOUT, **extra}  # fmt: skip
    if client.get("client_secret"):
        env["CLIENT_SECRET"] = client["client_secret"]
    return env


def assert_all_passed(
    run: ScriptRun, agent: UserAgent, expected: set[str], server: Server | None = None
) -> None:
    """Every check ran (none skipped by an early stop) and passed; a failure shows the checks,
    the browser's trail, node's stderr and the end of the server's log."""
    why = run.explain(agent) + (f"\nserver log:\n{server.log()[-4000:]}" if server else "")
    assert run.failed == 0 and run.returncode == 0, why
    assert set(run.result["checks"]) == expected, why
    print(run.result["script"], run.result["mode"], f"{run.passed} passed, {run.failed} failed")


async def test_harness_self_test_against_oidc_provider(node_modules: Path, chromium: str) -> None:
    """The harness is right: every check passes against a certified provider."""
    login = "carol@example.com"
    # oidc-provider grants offline_access only with prompt=consent (its documented rule).
    consent = '{"prompt": "consent"}'
    async with (
        oidc_provider(node_modules, REDIRECT_URI, POST_LOGOUT) as op,
        chromium_browser(chromium) as browser,
    ):
        issuer, clients = op["issuer"], op["clients"]
        for mode in MODES:
            env = flow_env(issuer, clients[mode], mode, AUTH_PARAMS=consent)
            # One retry, for the reference provider only: under a loaded CI machine Chromium
            # sometimes aborts the navigation to oidc-provider's end-session page (a
            # chrome-error interruption), which says nothing about the harness. The flows
            # against authsvc never retry.
            for _attempt in range(2):
                agent = await UserAgent.open(browser, DevInteractions(login), STOPS)
                run = await run_script(node_modules, "rp_flow.mjs", env, agent)
                await agent.close()
                if not run.failed:
                    break
            assert_all_passed(
                run, agent, FLOW_CHECKS | ({"dpop_binding"} if mode == "dpop" else set())
            )
            assert run.result["callback_params"] == ["code", "iss", "state"]
            assert run.result["id_token_claims"]["sub"] == login
            assert run.result["userinfo"]["email"] == login
        agent = await UserAgent.open(browser, DevInteractions(login), STOPS)
        run = await run_script(
            node_modules, "rp_o4w.mjs", flow_env(issuer, clients["public"], "public"), agent
        )
        await agent.close()
        assert_all_passed(run, agent, O4W_CHECKS)
        assert run.result["id_token_claims"]["sub"] == login
        agent = await UserAgent.open(browser, DevInteractions(login), STOPS)
        run = await authlib_flow(issuer, clients["confidential"], REDIRECT_URI, agent.visit,
                                 {"prompt": "consent"})  # fmt: skip
        await agent.close()
        assert_all_passed(run, agent, AUTHLIB_CHECKS)
        assert run.result["id_token_claims"]["sub"] == login
        # And a failure is counted: a wrong client secret fails the code exchange, the closing
        # line says so and the exit status is 1.
        agent = await UserAgent.open(browser, DevInteractions(login), STOPS)
        wrong = {**clients["confidential"], "client_secret": "not-the-secret"}
        env = flow_env(issuer, wrong, "confidential", AUTH_PARAMS=consent)
        run = await run_script(node_modules, "rp_flow.mjs", env, agent)
        await agent.close()
        assert (run.passed, run.failed, run.returncode) == (1, 1, 1), run.explain(agent)
        assert "invalid_client" in run.result["checks"]["authorization_code_grant"]


# ---------------------------------------------------------------------------------------------
# (b) The same scripts against a real ``authsvc serve`` on SQLite, and on PostgreSQL when
# AUTHSVC_TEST_POSTGRES_DSN is set; the login on /ui/login.

ADMIN, USER, PASSWORD = "root@example.com", "alice@example.com", "correct horse battery"
DEVICE_CODE_TTL = 25
"""``oidc.device_code_ttl`` of the server under test: short, so ``rp_device.mjs`` sees a request
expire (``expired_token``) within its run."""
DEVICE_CHECKS = {"discovery", "device_authorization", "second_device_authorization",
                 "authorization_pending", "slow_down", "device_code_grant", "id_token_claims",
                 "refresh", "expired_token"}  # fmt: skip
"""What ``rp_device.mjs`` checks."""
PAR_CHECKS = {"discovery", "pushed_authorization_request", "authorization_code_grant",
              "without_par_refused"}  # fmt: skip
"""What ``rp_par.mjs`` checks."""
O4W_DEVICE_CHECKS = {"discovery", "device_authorization", "authorization_pending", "slow_down",
                     "device_code_grant", "id_token_claims", "used_once"}  # fmt: skip
"""What ``rp_o4w_device.mjs`` checks."""
CLIENTS: dict[str, dict[str, Any]] = {
    # A first-party server app: a secret, no consent page.
    "confidential": {"public": False, "token_endpoint_auth_method": "client_secret_basic",
                     "skip_consent": True},
    # A browser or mobile app: no secret; the user consents.
    "public": {"public": True, "token_endpoint_auth_method": "none", "skip_consent": False},
    # The same with its tokens bound to a DPoP key (RFC 9449).
    "dpop": {"public": True, "token_endpoint_auth_method": "none", "skip_consent": False,
             "require_dpop": True},
}  # fmt: skip


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The storage settings of the server under test: a SQLite file in ``tmp_path``, or a fresh
    schema of the test PostgreSQL (``AUTHSVC_TEST_POSTGRES_DSN``; dropped afterwards) with the
    signing keys in the database, encrypted under a fresh key-encryption key (as
    ``tests/e2e/conftest.py`` gives each e2e server its own schema)."""
    yield from server_storage(request.param, tmp_path, "authsvc_interop")


@pytest.fixture
def authsvc(tmp_path: Path, storage: dict[str, str]) -> Iterator[Server]:
    """``authsvc serve`` on SQLite or PostgreSQL (``storage``) with ``auth.issuer`` = its
    loopback address, and a superadmin created by ``authsvc create-superadmin`` as an operator
    would."""
    port = free_port()
    env = {
        **storage,
        "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
        "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
        "AUTHSVC_AUTH__ISSUER": f"http://127.0.0.1:{port}",
        "AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0",
        "AUTHSVC_OIDC__DEVICE_CODE_TTL": str(DEVICE_CODE_TTL),
    }
    subprocess.run(
        [sys.executable, "-m", "entrypoints.cli", "create-superadmin", "--email", ADMIN],
        cwd=ROOT, env={**os.environ, **env, "AUTHSVC_BOOTSTRAP_PASSWORD": PASSWORD},
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    server = Server(env, port=port)
    try:
        yield server
    finally:
        server.stop()


async def call(http: aiohttp.ClientSession, method: str, url: str, token: str | None = None,
               **body: Any) -> tuple[int, Any]:  # fmt: skip
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with http.request(method, url, json=body or None, headers=headers) as resp:
        return resp.status, await resp.json(content_type=None)


async def registered(base: str) -> tuple[str, dict[str, dict[str, str]]]:
    """Alice (a user) and the three code-flow clients registered through the admin API
    (docs/reference/oauth-and-oidc.md)."""
    async with aiohttp.ClientSession() as http:
        status, meta = await call(http, "GET", base + "/.well-known/openid-configuration")
        assert status == 200, meta
        for name in ("authorization_endpoint", "userinfo_endpoint", "end_session_endpoint"):
            assert name in meta, f"discovery lacks {name}"
        status, user = await call(http, "POST", base + "/register", email=USER, password=PASSWORD)
        assert status == 201, user
        status, pair = await call(http, "POST", base + "/login", email=ADMIN, password=PASSWORD)
        assert status == 200, pair
        clients = {}
        for mode, fields in CLIENTS.items():
            status, client = await call(
                http, "POST", base + "/oauth/clients", pair["access_token"],
                name=f"interop {mode}", scopes=[],
                grant_types=["authorization_code", "refresh_token"],
                redirect_uris=[REDIRECT_URI], post_logout_redirect_uris=[POST_LOGOUT], **fields,
            )  # fmt: skip
            assert status == 201, (mode, client)
            assert bool(client.get("client_secret")) == (mode == "confidential"), client
            assert {name: client.get(name) for name in fields} == fields, client
            clients[mode] = client
        return user["id"], clients


async def in_browser(browser: Browser, steps: LoginSteps,
                     flow: Callable[[UserAgent], Awaitable[ScriptRun]]) -> tuple[ScriptRun, UserAgent]:  # fmt: skip
    """Run ``flow`` in a fresh browser profile (one user's browser: its own cookies, so its own
    hosted session); the agent is returned for its trail."""
    agent = await UserAgent.open(browser, steps, STOPS)
    try:
        return await flow(agent), agent
    finally:
        await agent.close()


async def test_independent_clients_against_authsvc(
    node_modules: Path, chromium: str, authsvc: Server
) -> None:
    """openid-client (confidential, public, DPoP), oauth4webapi (public) and authlib
    (confidential) complete the code flow against authsvc, Chromium logging in on /ui/login and
    consenting on /ui/consent. The five flows run at once, each in its own browser profile
    (its own hosted session: one flow's logout ends no other's)."""
    user_id, clients = await registered(authsvc.base)
    steps = HostedPages(USER, PASSWORD)
    base = authsvc.base

    def script(name: str, mode: str) -> Callable[[UserAgent], Awaitable[ScriptRun]]:
        env = flow_env(base, clients["public" if name == "rp_o4w.mjs" else mode], mode)
        return lambda agent: run_script(node_modules, name, env, agent)

    async with chromium_browser(chromium) as browser:
        *flows, o4w, authlib = await asyncio.gather(
            *(in_browser(browser, steps, script("rp_flow.mjs", mode)) for mode in MODES),
            in_browser(browser, steps, script("rp_o4w.mjs", "public")),
            in_browser(browser, steps, lambda agent: authlib_flow(
                base, clients["confidential"], REDIRECT_URI, agent.visit)),
        )  # fmt: skip
    for mode, (run, agent) in zip(MODES, flows, strict=True):
        dpop = {"dpop_binding"} if mode == "dpop" else set()
        assert_all_passed(run, agent, FLOW_CHECKS | dpop, authsvc)
        seen = run.result
        assert seen["callback_params"] == ["code", "iss", "state"]
        claims = seen["id_token_claims"]
        # docs/reference/oauth-and-oidc.md: sub is the user id, azp the client, a password login.
        assert claims["sub"] == user_id and claims["azp"] == clients[mode]["client_id"]
        assert claims["amr"] == ["pwd"] and claims["acr"] == "1" and claims["sid"]
        assert seen["userinfo"]["email"] == USER and seen["refresh_rotated"] is True
        consented = any("/ui/consent" in step for step in agent.trail)
        assert consented is not CLIENTS[mode]["skip_consent"], agent.trail
    for (run, agent), checks in ((o4w, O4W_CHECKS), (authlib, AUTHLIB_CHECKS)):
        assert_all_passed(run, agent, checks, authsvc)
        assert run.result["id_token_claims"]["sub"] == user_id


# ---------------------------------------------------------------------------------------------
# (c) An app's authorization request through sign-up (docs/guides/self-service.md): the login
# page's "Create account", the verification mail, consent, back to the app.

NEWCOMER = "newcomer@example.com"
_VERIFY_LINK = re.compile(r"https?://\S+/ui/verify\?token=[A-Za-z0-9_-]+")


@pytest.fixture
def mail_sink() -> Iterator[tuple[SmtpSink, int]]:
    """A real SMTP server (aiosmtpd, its own thread) on a free loopback port."""
    sink, port = SmtpSink(), free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield sink, port
    finally:
        controller.stop()


@dataclass(frozen=True)
class SignUpService:
    """``authsvc serve`` requiring verified emails and the public client registered for it."""

    server: Server
    client_id: str


@pytest.fixture
def signup_authsvc(
    tmp_path: Path, storage: dict[str, str], mail_sink: tuple[SmtpSink, int]
) -> Iterator[SignUpService]:
    """``authsvc serve`` (SQLite or PostgreSQL) requiring verified emails, its mail going to
    ``mail_sink``, and a public code-flow client registered by ``authsvc clients create`` as an
    operator would (no admin could sign in yet: nobody has a verified email)."""
    port = free_port()
    env = {
        **storage,
        **smtp_env(mail_sink[1]),
        "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
        "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
        "AUTHSVC_AUTH__ISSUER": f"http://127.0.0.1:{port}",
        "AUTHSVC_AUTH__REQUIRE_VERIFIED_EMAIL": "true",
        "AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0",
    }
    created = subprocess.run(
        [sys.executable, "-m", "entrypoints.cli", "clients", "create", "--public",
         "--grant-type", "authorization_code", "--grant-type", "refresh_token",
         "--redirect-uri", REDIRECT_URI, "--post-logout-redirect-uri", POST_LOGOUT,
         "interop sign-up"],
        cwd=ROOT, env={**os.environ, **env}, check=True, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    found = re.search(r"^client_id: (\S+)$", created.stdout, re.MULTILINE)
    assert found, created.stdout
    # The signing keys made now, not at the server's start (which must be ready within 30 s).
    subprocess.run([sys.executable, "-m", "entrypoints.cli", "keys", "list"], cwd=ROOT,
                   env={**os.environ, **env}, check=True, capture_output=True, timeout=60)  # fmt: skip
    server = Server(env, port=port)
    try:
        yield SignUpService(server, found.group(1))
    finally:
        server.stop()


@pytest.mark.timeout(300)  # three processes start (the CLI twice, the server), six pages walked
async def test_openid_client_through_sign_up_and_verification(
    node_modules: Path,
    chromium: str,
    signup_authsvc: SignUpService,
    mail_sink: tuple[SmtpSink, int],
) -> None:
    """openid-client (a public client, so the consent page shows) starts an authorization
    request; Chromium follows "Create account" on the login page, signs up, and — the test
    taking the verification link from the mail — opens it in the same browser, confirms,
    consents; the app gets a code and an ID token that openid-client verifies, and every other
    check of ``rp_flow.mjs`` passes for the new user, whose email is verified."""
    sink, server = mail_sink[0], signup_authsvc.server
    client = {"client_id": signup_authsvc.client_id}

    async def mail_link(email: str) -> str:
        found = _VERIFY_LINK.search(text_of(await sink.wait_for(email, within=15.0)))
        assert found, "no verification link in the mail"
        return found.group(0)

    env = flow_env(server.base, client, "public")
    async with chromium_browser(chromium) as browser:
        run, agent = await in_browser(
            browser, SignUpPages(NEWCOMER, PASSWORD, mail_link),
            lambda agent: run_script(node_modules, "rp_flow.mjs", env, agent),
        )  # fmt: skip
    assert_all_passed(run, agent, FLOW_CHECKS, server)
    trail = "\n".join(agent.trail)
    for page in ("/ui/register?", "/ui/register/check-mail", "/ui/verify?token=", "/ui/consent"):
        assert page in trail, trail
    claims = run.result["id_token_claims"]
    assert claims["azp"] == signup_authsvc.client_id and claims["amr"] == ["pwd"]
    assert run.result["userinfo"]["email"] == NEWCOMER
    assert run.result["userinfo"]["email_verified"] is True


async def device_and_par_clients(base: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    """A public device-flow client, and a confidential ``private_key_jwt`` client that requires
    PAR, registered through the admin API; the latter's private key as a JWK (JSON)."""
    key = ec.generate_private_key(ec.SECP256R1())
    private = {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key)), "kid": "interop-1"}
    public = {k: v for k, v in private.items() if k != "d"}
    async with aiohttp.ClientSession() as http:
        status, pair = await call(http, "POST", base + "/login", email=ADMIN, password=PASSWORD)
        assert status == 200, pair
        status, device = await call(
            http, "POST", base + "/oauth/clients", pair["access_token"], name="interop device",
            scopes=[], public=True, token_endpoint_auth_method="none",
            grant_types=["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
        )  # fmt: skip
        assert status == 201, device
        status, par = await call(
            http, "POST", base + "/oauth/clients", pair["access_token"], name="interop par",
            scopes=[], grant_types=["authorization_code"], redirect_uris=[REDIRECT_URI],
            token_endpoint_auth_method="private_key_jwt", jwks={"keys": [public]},
            require_pushed_authorization_requests=True,
        )  # fmt: skip
        assert status == 201, par
    return device, par, json.dumps(private)


async def test_device_flow_par_and_private_key_jwt_against_authsvc(
    node_modules: Path, chromium: str, authsvc: Server
) -> None:
    """openid-client runs the device flow (the user approves on /ui/device in Chromium while the
    library polls; ``slow_down`` and ``expired_token`` seen) and, as a ``private_key_jwt``
    client that requires PAR, the code flow through ``/oauth/par`` — refused without it;
    oauth4webapi runs the device flow step by step (docs/reference/oauth-and-oidc.md). The
    three run at once, each in its own browser profile."""
    user_id, _ = await registered(authsvc.base)
    device, par, private_jwk = await device_and_par_clients(authsvc.base)
    steps = HostedPages(USER, PASSWORD)
    base = authsvc.base
    device_env = {"ISSUER": base, "CLIENT_ID": device["client_id"],
                  "DEVICE_CODE_TTL": str(DEVICE_CODE_TTL)}  # fmt: skip
    par_env = {"ISSUER": base, "CLIENT_ID": par["client_id"], "PRIVATE_JWK": private_jwk,
               "REDIRECT_URI": REDIRECT_URI}  # fmt: skip
    o4w_env = {"ISSUER": base, "CLIENT_ID": device["client_id"]}
    async with chromium_browser(chromium) as browser:
        (device_run, device_agent), (par_run, par_agent), (o4w_run, o4w_agent) = await asyncio.gather(
            in_browser(browser, steps, lambda a: run_script(node_modules, "rp_device.mjs",
                                                            device_env, a)),
            in_browser(browser, steps, lambda a: run_script(node_modules, "rp_par.mjs",
                                                            par_env, a)),
            in_browser(browser, steps, lambda a: run_script(node_modules, "rp_o4w_device.mjs",
                                                            o4w_env, a)),
        )  # fmt: skip
    assert_all_passed(device_run, device_agent, DEVICE_CHECKS, authsvc)
    assert device_run.result["id_token_claims"]["sub"] == user_id
    assert "/ui/device/done?result=approved" in device_run.result["browser_ended_on"]
    assert_all_passed(par_run, par_agent, PAR_CHECKS, authsvc)
    assert par_run.result["id_token_claims"]["sub"] == user_id
    assert_all_passed(o4w_run, o4w_agent, O4W_DEVICE_CHECKS, authsvc)
    assert o4w_run.result["id_token_claims"]["sub"] == user_id
