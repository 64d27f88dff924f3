"""A real browser signs in to an app with a passkey on the hosted login page
(docs/reference/mfa-and-passkeys.md and docs/reference/oauth-and-oidc.md; research OP-20, OP-27; ADR
0033).

Debian's Chromium (``AUTHSVC_TEST_CHROMIUM``, e.g. ``/usr/bin/chromium``), driven by Playwright
for Python through ``executable_path`` (never ``playwright install``), runs the authorization
code flow of a registered client: ``/oauth/authorize`` → ``/ui/login`` → back to the client's
loopback ``redirect_uri`` (served by the test) with a code, which the test exchanges for an ID
token. The passkey is registered over the JSON API with the software authenticator, and its
private key handed to a DevTools virtual authenticator (``WebAuthn.addCredential``), so the
browser holds the very credential authsvc knows. The page's ``navigator.credentials.get``
calls are recorded by an init script.

What DevTools allows: with the WebAuthn UI enabled (``WebAuthn.enable {enableUI: true}``)
Chromium holds a conditional request pending, offering the passkey in the email field's
autofill, but a headless browser gives no way to pick an autofill entry, and a modal request
waits for its dialog; with the UI disabled a modal request completes by itself, and a
conditional one is refused at once (``NotAllowedError``). So the button test loads the page
with the UI on (the conditional request pending), then turns it off before pressing the button
(a new virtual environment holding the same credential): the button must abort the pending
conditional request (``AbortError``) before its modal one signs in. The conditional test proves
the request starts on load and is held, and that the password form still signs in meanwhile
(authentik#23179, and #23187's regression of an aborted conditional request); picking the
passkey from the autofill list is left to a manual check."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from playwright.async_api import Page, async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.helpers import PASSWORD, bearer, register_and_login
from tests.e2e.oidc_helpers import (
    Registered,
    auth_params,
    exchange,
    pkce,
    query_of,
    register_client,
)
from tests.e2e.servers import free_port
from tests.webauthn_authenticator import SoftAuthenticator, b64url_decode

CHROMIUM = os.environ.get("AUTHSVC_TEST_CHROMIUM")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
RECORD_GETS = """
(() => {
  let calls = 0;
  const original = navigator.credentials.get.bind(navigator.credentials);
  navigator.credentials.get = (options) => {
    const call = calls++;
    const mediation = (options && options.mediation) || "optional";
    window.recordGet(location.pathname, call, mediation, "pending");
    const promise = original(options);
    promise.then(() => window.recordGet(location.pathname, call, mediation, "resolved"),
                 (e) => window.recordGet(location.pathname, call, mediation, e.name + ": " + e.message));
    return promise;
  };
})();
"""
"""An init script reporting each ``navigator.credentials.get`` call of a page to the test
(``recordGet``): its mediation, then how it ended (``resolved``, ``AbortError`` ...)."""


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the browser's part does not depend on the storage."""
    return ("sqlite", "RS256")


@pytest.fixture
def chromium() -> str:
    if CHROMIUM is None:
        pytest.skip("AUTHSVC_TEST_CHROMIUM is not set (e.g. /usr/bin/chromium, Debian's chromium)")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"AUTHSVC_TEST_CHROMIUM={CHROMIUM} does not exist")
    return CHROMIUM


def b64(data: bytes) -> str:
    """Standard base64: DevTools' encoding of binary fields."""
    return base64.b64encode(data).decode("ascii")


async def enrol(client: TestClient, origin: str) -> tuple[SoftAuthenticator, bytes]:
    """alice with one passkey registered over the JSON API: the device and its user handle."""
    access = (await register_and_login(client))["access_token"]
    resp = await client.post("/me/passkeys/registration/options", json={"password": PASSWORD},
                             headers=bearer(access))  # fmt: skip
    started = await resp.json()
    device = SoftAuthenticator("ES256")
    answer = device.register(started["options"], origin)
    resp = await client.post("/me/passkeys", headers=bearer(access),
                             json={"ceremony_id": started["ceremony_id"], "credential": answer})  # fmt: skip
    assert resp.status == 201, await resp.text()
    return device, b64url_decode(started["options"]["user"]["id"])


async def hand_to_browser(cdp: Any, authenticator: str, device: SoftAuthenticator,
                          handle: bytes) -> None:  # fmt: skip
    """Put ``device``'s credential (a discoverable one) into the virtual authenticator."""
    key = device.key.private_bytes(Encoding.DER, PrivateFormat.PKCS8, NoEncryption())
    await cdp.send("WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": {
        "credentialId": b64(device.credential_id), "isResidentCredential": True,
        "rpId": "localhost", "privateKey": b64(key), "userHandle": b64(handle),
        "signCount": device.sign_count}})  # fmt: skip


class Gets:
    """The ``get()`` calls the login page made, in order: ``[{"mediation", "outcome"}]``."""

    def __init__(self) -> None:
        self.calls: list[dict[str, str]] = []
        self.changed = asyncio.Event()

    def record(self, path: str, call: int, mediation: str, outcome: str) -> None:
        assert path == "/ui/login", path
        if call == len(self.calls):
            self.calls.append({"mediation": mediation, "outcome": outcome})
        else:
            self.calls[call] = {"mediation": mediation, "outcome": outcome}
        self.changed.set()

    async def wait(self, call: int) -> dict[str, str]:
        """The ``call``-th ``get()`` once it has been made."""
        async with asyncio.timeout(10):
            while len(self.calls) <= call:
                self.changed.clear()
                await self.changed.wait()
        return self.calls[call]


WithoutUi = Callable[[], Awaitable[None]]
Flow = Callable[[Page, Gets, WithoutUi], Awaitable[None]]
AUTHENTICATOR = {"options": {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
                             "hasUserVerification": True, "isUserVerified": True,
                             "automaticPresenceSimulation": True}}  # fmt: skip
"""A platform authenticator (user verification done, presence simulated)."""


async def sign_in_with_chromium(
    aiohttp_client: Callable[..., Awaitable[TestClient]],
    base_env: dict[str, str],
    chromium: str,
    sign_in: Flow,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run the code flow in Chromium, ``sign_in(page, gets, without_ui)`` doing the login on
    /ui/login, opened with alice's passkey in a virtual authenticator and the WebAuthn UI on
    (``without_ui()`` turns it off: a new virtual environment, the same credential); returns
    the ID token's claims and the page's ``get()`` calls."""
    port, app_port = free_port(), free_port()
    issuer = f"http://localhost:{port}"
    redirect_uri = f"http://127.0.0.1:{app_port}/cb"  # a loopback redirect (RFC 8252 §7.3)
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": issuer}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    client = await aiohttp_client(app, server_kwargs={"port": port})
    registered: Registered = await register_client(
        client, skip_consent=True, redirect_uris=(redirect_uri,)
    )
    device, handle = await enrol(client, issuer)
    verifier, challenge = pkce()
    params = auth_params(registered, challenge, redirect_uri=redirect_uri)
    authorize_url = f"{issuer}/oauth/authorize?{urlencode(params)}"
    callbacks: list[str] = []
    called = asyncio.Event()
    gets = Gets()

    async def callback(request: web.Request) -> web.Response:
        callbacks.append(str(request.url))
        called.set()
        return web.Response(text="signed in")

    app_site = web.Application()
    app_site.router.add_get("/cb", callback)
    app_server = TestServer(app_site, host="127.0.0.1", port=app_port)
    await app_server.start_server()

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            context = await browser.new_context()
            await context.expose_function("recordGet", gets.record)
            await context.add_init_script(RECORD_GETS)
            page = await context.new_page()
            cdp = await context.new_cdp_session(page)

            async def virtual_environment(ui: bool) -> None:
                await cdp.send("WebAuthn.enable", {"enableUI": ui})
                added = await cdp.send("WebAuthn.addVirtualAuthenticator", AUTHENTICATOR)
                await hand_to_browser(cdp, added["authenticatorId"], device, handle)

            async def without_ui() -> None:
                await cdp.send("WebAuthn.disable")
                await virtual_environment(ui=False)

            await virtual_environment(ui=True)
            await page.goto(authorize_url)
            assert page.url.startswith(f"{issuer}/ui/login?"), page.url
            await sign_in(page, gets, without_ui)
            async with asyncio.timeout(15):
                await called.wait()
        finally:
            await browser.close()
            await app_server.close()
    assert len(callbacks) == 1, callbacks
    query = query_of(callbacks[0])
    assert query["state"] == "st-1" and query["iss"] == issuer
    resp = await exchange(client, registered, query["code"], verifier, redirect_uri)
    assert resp.status == 200, await resp.text()
    id_token = (await resp.json())["id_token"]
    jwks = await (await client.get("/.well-known/jwks.json")).json()
    (key,) = [k for k in jwks["keys"] if k["kid"] == jwt.get_unverified_header(id_token)["kid"]]
    claims: dict[str, Any] = jwt.decode(
        id_token, jwt.PyJWK(key).key, algorithms=["RS256"], audience=registered.id, issuer=issuer
    )
    return claims, gets.calls


async def test_sign_in_with_the_passkey_button(
    aiohttp_client: Callable[..., Awaitable[TestClient]], base_env: dict[str, str], chromium: str
) -> None:
    """The page starts conditional UI on load; the button aborts that request, then runs its
    own (modal) one, which signs in: amr ["hwk", "user"], acr "2"."""

    async def by_button(page: Page, gets: Gets, without_ui: WithoutUi) -> None:
        assert await gets.wait(0) == {"mediation": "conditional", "outcome": "pending"}
        await asyncio.sleep(0.5)  # held, not refused: Chromium offers the passkey in autofill
        assert gets.calls[0]["outcome"] == "pending"
        await without_ui()
        await page.get_by_role("button", name="Sign in with a passkey").click()

    claims, calls = await sign_in_with_chromium(aiohttp_client, base_env, chromium, by_button)
    assert [c["mediation"] for c in calls] == ["conditional", "optional"]
    assert calls[0]["outcome"].startswith("AbortError"), calls
    assert calls[1]["outcome"] == "resolved", calls
    assert claims["amr"] == ["hwk", "user"] and claims["acr"] == "2"


async def test_conditional_ui_is_held_and_the_password_still_signs_in(
    aiohttp_client: Callable[..., Awaitable[TestClient]], base_env: dict[str, str], chromium: str
) -> None:
    """The conditional request starts on load with the discoverable options and stays pending
    (the email field has ``autocomplete="username webauthn"``); the form signs in meanwhile."""

    async def by_password(page: Page, gets: Gets, _: WithoutUi) -> None:
        assert await gets.wait(0) == {"mediation": "conditional", "outcome": "pending"}
        email = page.get_by_label("Email")
        assert await email.get_attribute("autocomplete") == "username webauthn"
        await email.click()
        await asyncio.sleep(0.5)
        assert gets.calls == [{"mediation": "conditional", "outcome": "pending"}]
        await email.fill("alice@example.com")
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in", exact=True).click()

    claims, calls = await sign_in_with_chromium(aiohttp_client, base_env, chromium, by_password)
    assert calls == [{"mediation": "conditional", "outcome": "pending"}]
    assert claims["amr"] == ["pwd"] and claims["acr"] == "1"
