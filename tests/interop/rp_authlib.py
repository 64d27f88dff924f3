"""A Python relying party: authlib's ``AsyncOAuth2Client`` (httpx) as a confidential client
with ``client_secret_basic`` runs the code flow with PKCE S256 (docs/reference/oauth-and-oidc.md,
last bullet: "authlib's client in Python too"; research oidc-provider.md §4.3, §5).

Discovery is validated by authlib's ``OpenIDProviderMetadata``; the ID token by joserfc against
the provider's JWKS (signature, ``iss``, ``aud``, ``exp``, ``iat``, ``nonce``). The same named
checks and closing count as the node scripts (see ``harness.mjs``), so one assertion helper
judges all three clients."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.oidc.discovery import OpenIDProviderMetadata
from joserfc import jwt
from joserfc.jwk import KeySet

from tests.interop.driver import ScriptRun

Visit = Callable[[str], Awaitable[str]]


class _Checks:
    """Named checks: a failure is recorded and the flow goes on (as ``harness.mjs``)."""

    def __init__(self) -> None:
        self.results: dict[str, str] = {}

    async def run(self, name: str, step: Callable[[], Awaitable[Any]]) -> Any:
        try:
            value = await step()
        except Exception as exc:  # any failure is a failed check, reported by name
            self.results[name] = f"FAILED: {type(exc).__name__}: {exc}"
            return None
        self.results[name] = "ok"
        return value


async def authlib_flow(issuer: str, client: dict[str, str], redirect_uri: str, visit: Visit,
                       extra: dict[str, str] | None = None) -> ScriptRun:  # fmt: skip
    """The code flow for ``client`` (``client_id``, ``client_secret``) at ``issuer``; ``visit``
    is the browser step (a URL → the URL it landed on)."""
    checks = _Checks()
    result: dict[str, Any] = {"script": "rp_authlib", "library": "authlib", "mode": "confidential"}

    async def discover() -> tuple[dict[str, Any], KeySet]:
        async with httpx.AsyncClient() as http:
            meta = (await http.get(issuer + "/.well-known/openid-configuration")).json()
            OpenIDProviderMetadata(meta).validate()
            assert meta["issuer"] == issuer, meta["issuer"]
            keys = KeySet.import_key_set((await http.get(meta["jwks_uri"])).json())
        return meta, keys

    found = await checks.run("discovery", discover)
    if found is None:
        return _report(result, checks)
    meta, keys = found
    async with AsyncOAuth2Client(
        client["client_id"], client["client_secret"], scope="openid email offline_access",
        redirect_uri=redirect_uri, code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_basic",
    ) as oauth:  # fmt: skip
        verifier, nonce = generate_token(48), generate_token(24)
        url, state = oauth.create_authorization_url(
            meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce, **(extra or {})
        )
        callback = await visit(url)
        query = {k: v[0] for k, v in parse_qs(urlsplit(callback).query).items()}
        result["callback_params"] = sorted(query)

        async def exchange() -> dict[str, Any]:
            assert callback.startswith(redirect_uri), callback
            assert query.get("state") == state and query.get("iss") == issuer, query
            token = await oauth.fetch_token(meta["token_endpoint"], authorization_response=callback,
                                            state=state, code_verifier=verifier)  # fmt: skip
            assert token["token_type"].lower() == "bearer" and token.get("refresh_token"), token
            return dict(token)

        token = await checks.run("authorization_code_grant", exchange)
        if token is None:
            return _report(result, checks)

        async def id_token() -> dict[str, Any]:
            algorithms = meta["id_token_signing_alg_values_supported"]
            decoded = jwt.decode(token["id_token"], keys, algorithms=algorithms)
            jwt.JWTClaimsRegistry(
                now=int(time.time()), leeway=5,
                iss={"essential": True, "value": issuer},
                aud={"essential": True, "value": client["client_id"]},
                nonce={"essential": True, "value": nonce},
                exp={"essential": True}, iat={"essential": True}, sub={"essential": True},
            ).validate(decoded.claims)  # fmt: skip
            return dict(decoded.claims)

        claims = await checks.run("id_token_claims", id_token)
        result["id_token_claims"] = claims

        async def userinfo() -> dict[str, Any]:
            info = (await oauth.get(meta["userinfo_endpoint"])).raise_for_status().json()
            assert claims and info["sub"] == claims["sub"] and info.get("email"), info
            return dict(info)

        result["userinfo"] = await checks.run("userinfo", userinfo)

        async def refresh() -> None:
            old = token["access_token"]
            new = await oauth.refresh_token(meta["token_endpoint"])
            assert new["access_token"] != old, "a new access token"
            info = (await oauth.get(meta["userinfo_endpoint"])).raise_for_status().json()
            assert claims and info["sub"] == claims["sub"], info

        await checks.run("refresh", refresh)
    return _report(result, checks)


def _report(result: dict[str, Any], checks: _Checks) -> ScriptRun:
    passed = sum(value == "ok" for value in checks.results.values())
    failed = len(checks.results) - passed
    return ScriptRun({**result, "checks": checks.results}, passed, failed, int(failed > 0), "")
