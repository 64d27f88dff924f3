"""Independent clients prove the OpenID Provider (issue 31; contract section 15, last bullet;
research oidc-provider.md §5 and OP-30).

panva's ``openid-client`` 6.8.9 (a confidential client with ``client_secret_basic``, a public
client, and a public client with DPoP) and ``oauth4webapi`` 3.8.8 (a public client) run the whole
authorization code flow with PKCE; the login is done by Playwright driving Debian's Chromium.
The same scripts first run against panva's ``oidc-provider`` 9.13.3, a certified provider
(the harness self-test: a failure there is the harness's, not authsvc's), then against a real
``authsvc serve`` process. Each script ends with ``N passed, N failed``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop.driver import (
    DevInteractions,
    ScriptRun,
    UserAgent,
    chromium_browser,
    oidc_provider,
    run_script,
)

REDIRECT_URI = "http://127.0.0.1:8765/cb"
"""Registered for every test client; the browser step answers it, nothing listens there (a
loopback IP literal: authsvc matches it on any port, oidc-provider exactly)."""
POST_LOGOUT = "http://127.0.0.1:8765/signed-out"
STOPS = (REDIRECT_URI, POST_LOGOUT)
MODES = ("confidential", "public", "dpop")
FLOW_CHECKS = {"discovery", "authorization_code_grant", "id_token_claims", "userinfo", "refresh",
               "code_reuse_refused_and_revokes", "end_session", "prompt_none_after_logout"}  # fmt: skip
"""What ``rp_flow.mjs`` checks (``dpop_binding`` too in the DPoP mode)."""
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


def assert_all_passed(run: ScriptRun, agent: UserAgent, expected: set[str]) -> None:
    """Every check ran (none skipped by an early stop) and passed."""
    assert run.failed == 0 and run.returncode == 0, run.explain(agent)
    assert set(run.result["checks"]) == expected, run.explain(agent)
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
            agent = await UserAgent.open(browser, DevInteractions(login), STOPS)
            env = flow_env(issuer, clients[mode], mode, AUTH_PARAMS=consent)
            run = await run_script(node_modules, "rp_flow.mjs", env, agent)
            await agent.close()
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
