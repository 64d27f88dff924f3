"""Languages over HTTP (docs/guides/languages.md): the hosted pages in the language of the
authorization request's ``ui_locales``, else ``Accept-Language``, else ``ui.default_locale``,
kept from the login page to the consent page; ``ui.locales`` limits the choice; the mails in
the language of the request that caused them, text and HTML, overridable from
``ui.templates_dir``; malformed language input changes nothing."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from aiohttp.test_utils import TestClient

from entrypoints.config import ConfigError, load_config
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient
from tests.e2e.oidc_helpers import (
    ORIGIN,
    auth_params,
    authorize,
    csrf_of,
    pkce,
    register_client,
    register_user,
    sign_in,
)
from tests.smtp import SmtpSink, smtp_env, smtp_server, text_of

__all__ = ["smtp_server"]  # the fixture, for pytest

GERMAN = {"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"}
ENGLISH = {"Accept-Language": "en-US,en;q=0.9"}


@pytest.fixture(params=ONE_PER_BACKEND[:1])
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """One deployment: the language does not depend on storage or the signing algorithm."""
    return request.param  # type: ignore[no-any-return]


async def _page(client: TestClient, path: str, headers: dict[str, str] | None = None,
                **params: str) -> tuple[str, str]:  # fmt: skip
    resp = await client.get(path, params=params, headers=headers or {})
    assert resp.status == 200, await resp.text()
    return await resp.text(), resp.headers["Content-Language"]


async def test_the_login_page_follows_accept_language_else_the_default(
    client: TestClient,
) -> None:
    html, language = await _page(client, "/ui/login", GERMAN)
    assert '<html lang="de">' in html and language == "de"
    assert "<h1>Anmelden</h1>" in html and "Passwort vergessen?" in html
    html, language = await _page(client, "/ui/login")
    assert '<html lang="en">' in html and language == "en" and "<h1>Sign in</h1>" in html


async def test_ui_locales_beats_accept_language_from_login_to_consent(client: TestClient) -> None:
    await register_user(client)
    app = await register_client(client)
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge, ui_locales="fr de"))
    login = resp.headers["Location"]
    assert resp.status == 303 and login.startswith("/ui/login?")
    resp = await client.get(login, headers=ENGLISH)
    html = await resp.text()
    assert '<html lang="de">' in html and "<h1>Anmelden</h1>" in html
    return_to = parse_qs(urlsplit(login).query)["return_to"][0]
    form = {"email": "alice@example.com", "password": "wrong password",
            "csrf_token": csrf_of(client), "return_to": return_to}  # fmt: skip
    resp = await client.post("/ui/login", data=form, headers={**ORIGIN, **ENGLISH})
    assert resp.status == 401
    assert "E-Mail-Adresse oder Passwort ist falsch" in await resp.text()
    location = await sign_in(client, return_to)
    for _ in range(3):  # back to /oauth/authorize, which asks for consent
        if location.startswith("/ui/consent"):
            break
        resp = await client.get(location, allow_redirects=False, headers=ENGLISH)
        location = resp.headers["Location"]
    html, language = await _page(client, location, ENGLISH)
    assert language == "de" and "möchte auf Ihr Konto zugreifen" in html
    assert ">Erlauben</button>" in html and "Wissen, wer Sie sind" in html


async def test_ui_locales_offered_limit_the_choice(make_client: MakeClient) -> None:
    client = await make_client({"AUTHSVC_UI__LOCALES": '["en"]'})
    html, language = await _page(client, "/ui/login", GERMAN, ui_locales="de")
    assert language == "en" and "<h1>Sign in</h1>" in html
    client = await make_client({"AUTHSVC_UI__DEFAULT_LOCALE": "de"})
    html, language = await _page(client, "/ui/login", {"Accept-Language": "fr"})
    assert language == "de" and "<h1>Anmelden</h1>" in html


@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"AUTHSVC_UI__LOCALES": '["en", "fr"]'}, "ui.locales"),
        ({"AUTHSVC_UI__LOCALES": "[]"}, "ui.locales"),
        ({"AUTHSVC_UI__LOCALES": '["de", "de"]'}, "ui.locales"),
        ({"AUTHSVC_UI__LOCALES": '["en"]', "AUTHSVC_UI__DEFAULT_LOCALE": "de"}, "ui"),
    ],
)
def test_a_locale_without_a_catalog_or_a_default_not_offered_is_refused_at_start(
    env: dict[str, str], key: str
) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(None, environ=env)


@pytest.mark.parametrize(
    "value",
    [
        "<script>alert(1)</script>",
        "de;q=5",
        "*" * 3000,
        ",".join(["de"] * 400),
        "\tde\t",
        "q=0.5;de",
        "ü-DE",
    ],
)
async def test_malformed_language_input_shows_the_page_in_a_language_offered(
    client: TestClient, value: str
) -> None:
    resp = await client.get(
        "/ui/login", params={"ui_locales": value, "return_to": f"/x?ui_locales={value}"},
        headers={"Accept-Language": value},
    )  # fmt: skip
    assert resp.status == 200 and resp.headers["Content-Language"] in ("en", "de")
    assert "<script>alert" not in await resp.text()


def _parts(message: object) -> tuple[str, str]:
    html = message.get_body(preferencelist=("html",))  # type: ignore[attr-defined]
    assert html is not None
    text, markup = text_of(message), str(html.get_content())  # type: ignore[arg-type]
    return text.replace("\r\n", "\n"), markup.replace("\r\n", "\n")


async def test_mails_go_out_in_the_language_of_the_request_text_and_html(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await make_client(smtp_env(port))
    resp = await client.post("/register", json={"email": "anna@example.com", "password": PASSWORD},
                             headers=GERMAN)  # fmt: skip
    assert resp.status == 201
    mail = await sink.wait_for("anna@example.com")
    assert mail.get_content_type() == "multipart/alternative"
    assert mail["Subject"] == "Bestätigen Sie Ihre E-Mail-Adresse"
    text, html = _parts(mail)
    assert "Bitte bestätigen Sie" in text and "Der Link gilt 1 Tag lang" in text
    assert '<html lang="de">' in html and "Bitte bestätigen Sie" in html
    resp = await client.post("/password/forgot", json={"email": "anna@example.com"})
    assert resp.status == 202
    mail = await sink.wait_for("anna@example.com", 2)
    assert mail["Subject"] == "Reset your password" and "30 minutes" in text_of(mail)


async def test_a_reset_asked_on_the_page_of_an_authorization_request_follows_its_ui_locales(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await make_client(smtp_env(port))
    await register_user(client, "bo@example.com")
    await sink.wait_for("bo@example.com")
    return_to = "/oauth/authorize?client_id=x&ui_locales=de"
    await client.get("/ui/forgot", params={"return_to": return_to}, headers=ENGLISH)
    form = {"email": "bo@example.com", "csrf_token": csrf_of(client), "return_to": return_to}
    resp = await client.post("/ui/forgot", data=form, headers={**ORIGIN, **ENGLISH},
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 303
    mail = await sink.wait_for("bo@example.com", 2)
    assert mail["Subject"] == "Passwort zurücksetzen"
    assert "Jemand hat verlangt" in text_of(mail)


async def test_mail_templates_in_ui_templates_dir_are_used(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int], tmp_path: Path
) -> None:
    sink, port = smtp_server
    folder = tmp_path / "templates"
    (folder / "mail").mkdir(parents=True)
    (folder / "mail" / "verify.txt").write_text(
        "Example Corp · {{ _('Confirm your email address') }}\n{{ link }}\n"
    )
    (folder / "mail" / "verify.html").write_text(
        '<p lang="{{ lang }}">Example Corp: <a href="{{ link }}">{{ _("Confirm") }}</a></p>\n'
    )
    client = await make_client({**smtp_env(port), "AUTHSVC_UI__TEMPLATES_DIR": str(folder)})
    resp = await client.post("/register", json={"email": "cy@example.com", "password": PASSWORD},
                             headers=GERMAN)  # fmt: skip
    assert resp.status == 201
    text, html = _parts(await sink.wait_for("cy@example.com"))
    assert text.startswith("Example Corp · Bestätigen Sie Ihre E-Mail-Adresse\nhttp")
    assert html.startswith('<p lang="de">Example Corp: <a href="http') and ">Bestätigen</a>" in html
