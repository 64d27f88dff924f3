"""The hosted pages' plumbing (docs/reference/oauth-and-oidc.md): templates (aiohttp-jinja2,
autoescaped, shipped in the package, overridable by ``ui.templates_dir``), the headers every page
carries, the hosted-session and CSRF cookies, the CSRF check, and the safe ``return_to``."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import web

from domain.errors import DomainError, ValidationFailed
from domain.oidc import loopback_http
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import read_body

PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' https:; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
"""Every hosted page's headers (docs/reference/oauth-and-oidc.md; OAuth 2.1 §7.11 clickjacking)."""
_FORM = "application/x-www-form-urlencoded"
MAX_RETURN_TO = 16_384
"""The longest ``return_to`` followed (characters): an authorization request carrying an
ML-DSA-87 ``id_token_hint`` (about 6.7 kB) and its other parameters."""
_MAX_PARAMS = 32
_NEW_CSRF: web.RequestKey[str] = web.RequestKey("new_csrf", str)


TEMPLATES = Path(__file__).parent / "templates"
"""The hosted pages' shipped templates (the console's are ``entrypoints.http.console.web``'s)."""


class LiveTemplatesLoader(jinja2.BaseLoader):
    """Templates from the folder ``templates_dir()`` names now (when set) first, then the
    shipped ones (the folders of ``shipped``, in order). A template loaded before
    ``templates_dir()`` changed is out of date, so a configuration refresh of
    ``ui.templates_dir`` is in force at the next page (Jinja's ``auto_reload``; the
    overrides' own changes too)."""

    def __init__(self, templates_dir: Callable[[], str], shipped: Sequence[Path]) -> None:
        self._templates_dir = templates_dir
        self._shipped = jinja2.FileSystemLoader([str(folder) for folder in shipped])

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        """Jinja's loader protocol: (source, file name, uptodate)."""
        chosen = self._templates_dir()
        loaders: list[jinja2.BaseLoader] = [self._shipped]
        if chosen:
            loaders.insert(0, jinja2.FileSystemLoader(str(Path(chosen).expanduser())))
        source, filename, uptodate = jinja2.ChoiceLoader(loaders).get_source(environment, template)

        def fresh() -> bool:
            return self._templates_dir() == chosen and (uptodate is None or uptodate())

        return source, filename, fresh


def setup_templates(
    app: web.Application,
    templates_dir: Callable[[], str],
    shipped: Sequence[Path],
    functions: Mapping[str, Callable[..., Any]],
) -> None:
    """Templates from ``templates_dir()`` (the ``ui.templates_dir`` in force, when set)
    first, then the shipped ones in the folders ``shipped`` (``LiveTemplatesLoader``);
    autoescaped; ``functions`` callable from every template (``asset``: a static file's
    URL). Jinja's i18n extension is on: text is marked ``{{ _("…") }}`` or
    ``{% trans %}…{% endtrans %}``."""
    loader = LiveTemplatesLoader(templates_dir, shipped)
    env = aiohttp_jinja2.setup(app, loader=loader, autoescape=True, extensions=["jinja2.ext.i18n"])
    env.install_null_translations(newstyle=True)  # type: ignore[attr-defined]
    env.globals.update(functions)


def issuer_of(request: web.Request) -> str:
    return str(request.app[CONTAINER].auth_settings().current.issuer)


def cookie_name(request: web.Request, base: str) -> str:
    """``__Host-authsvc_<base>``, or ``authsvc_<base>`` on an http loopback issuer."""
    return f"authsvc_{base}" if loopback_http(issuer_of(request)) else f"__Host-authsvc_{base}"


def set_cookie(response: web.StreamResponse, request: web.Request, base: str, value: str,
               max_age: int | None = None) -> None:  # fmt: skip
    """Set a cookie: ``HttpOnly``, ``SameSite=Lax``, ``Path=/``, ``Secure`` but on an http
    loopback issuer."""
    response.set_cookie(
        cookie_name(request, base), value, max_age=max_age, path="/", httponly=True,
        samesite="Lax", secure=not loopback_http(issuer_of(request)),
    )  # fmt: skip


def clear_cookie(response: web.StreamResponse, request: web.Request, base: str) -> None:
    response.del_cookie(
        cookie_name(request, base), path="/", secure=not loopback_http(issuer_of(request)),
        httponly=True, samesite="Lax",
    )  # fmt: skip


def session_cookie(request: web.Request) -> str | None:
    """The hosted session's cookie value, if any."""
    return request.cookies.get(cookie_name(request, "session"))


def csrf_token(request: web.Request) -> str:
    """The double-submit token of this browser (its cookie's value, or a new one that
    ``page`` sets)."""
    token = request.cookies.get(cookie_name(request, "csrf"))
    if token is None or len(token) != 43:
        token = request.get(_NEW_CSRF) or secrets.token_urlsafe(32)
        request[_NEW_CSRF] = token
    return token


def page(request: web.Request, template: str, context: dict[str, Any],
         status: int = 200) -> web.Response:  # fmt: skip
    """Render ``template`` with the branding in force (``ui``, read per page: a configuration
    refresh shows at once) and ``csrf_token``; the page headers; the CSRF cookie set when
    new."""
    ui = request.app[CONTAINER].live_config().current.ui
    token = csrf_token(request)
    full = {"ui": ui, "csrf_token": token, **context}
    response: web.Response = aiohttp_jinja2.render_template(template, request, full, status=status)
    response.headers.update(PAGE_HEADERS)
    if request.get(_NEW_CSRF):
        set_cookie(response, request, "csrf", token)
    return response


def see_other(request: web.Request, location: str) -> web.Response:
    """303 to ``location`` with the page headers (every POST answers 303, never 307)."""
    return web.Response(status=303, headers={**PAGE_HEADERS, "Location": location})


def error_page(request: web.Request, message: str, status: int = 400) -> web.Response:
    return page(request, "error.html", {"message": message}, status=status)


_MESSAGES = {
    403: "You may not do this.",
    404: "There is no such item, or it is not yours to see.",
    409: "This change conflicts with the current state.",
}


def refusal_message(error: DomainError, status: int) -> str:
    """The plain message a page shows for ``error`` answered with ``status``: the fields of a
    ``ValidationFailed``; the error's own detail for 409 and 422; else a fixed sentence per
    status (never another organization's data), the detail when there is none."""
    if isinstance(error, ValidationFailed):
        return "; ".join(f"{e.field}: {e.message}" for e in error.errors) or error.detail
    if status in (409, 422):
        return error.detail
    return _MESSAGES.get(status, error.detail)


def safe_return_to(value: str | None) -> str | None:
    """``value`` when it is a path of this service (``/...``, not ``//`` or ``/\\``, no
    scheme or host, no control character); else None (ignored, never followed)."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")):
        return None
    if any(ord(c) < 0x20 or c == "\\" for c in value) or len(value) > MAX_RETURN_TO:
        return None
    parts = urlsplit(value)
    return value if not parts.scheme and not parts.netloc else None


async def read_page_form(request: web.Request) -> dict[str, str] | None:
    """The form of a hosted page's POST, or None when it is not one (wrong type, not UTF-8,
    a repeated or NUL-holding parameter, too many)."""
    if request.content_type != _FORM:
        return None
    raw = await read_body(request)
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True,
                          max_num_fields=_MAX_PARAMS, errors="strict")  # fmt: skip
    except (UnicodeDecodeError, ValueError):
        return None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form or "\x00" in value or "\x00" in name:
            return None
        form[name] = value
    return form


def csrf_ok(request: web.Request, form: dict[str, str]) -> bool:
    """The POST comes from our own page: ``Origin`` is the issuer's origin (``null`` only with
    ``Sec-Fetch-Site: same-origin``) and ``csrf_token`` equals the CSRF cookie."""
    issuer = urlsplit(issuer_of(request))
    expected = f"{issuer.scheme}://{issuer.netloc}".lower()
    origin = request.headers.get("Origin", "").lower().rstrip("/")
    if origin == "null":
        if request.headers.get("Sec-Fetch-Site") != "same-origin":
            return False
    elif origin != expected:
        return False
    cookie = request.cookies.get(cookie_name(request, "csrf"), "")
    sent = form.get("csrf_token", "")
    return bool(cookie) and hmac.compare_digest(cookie.encode(), sent.encode())


def csrf_refused(request: web.Request) -> web.Response:
    return error_page(request, "This form expired or did not come from this site. Try again.", 403)
