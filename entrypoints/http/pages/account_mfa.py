"""Two-step sign-in on the account page (docs/reference/mfa-and-passkeys.md and
docs/reference/accounts.md): turn TOTP on (the ``otpauth://`` URI as a QR code, inline SVG made
server-side, and the secret as text; then a code confirms it and the recovery codes are shown
once), regenerate the recovery codes, turn it off (the password).

Each action is ``MfaEnrolment``'s, as the JSON API's ``/me/mfa/...`` routes: turning on and
regenerating take the hosted session's recent login as their fresh proof (a ``RecentLogin``,
``account_security.fresh_visit``); turning off asks for the password (counted by the login
throttle). The QR code is put into the page unescaped only when it is exactly the TOTP
adapter's SVG (``qr_markup``); anything else is left out (the secret stays shown as text).
"""

from __future__ import annotations

import re

from aiohttp import web
from markupsafe import Markup

from application.shared.reauth import FreshProof
from domain.errors import InvalidOldPassword, RateLimited, ValidationFailed
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.account_security import (
    client_of_request,
    fresh_visit,
    get,
    post,
    posted_form,
    refused,
    signed_in_visit,
)
from entrypoints.http.pages.web import page, see_other

TOTP = "/ui/account/totp"
_SEGNO_SVG = re.compile(
    r'<svg xmlns="http://www\.w3\.org/2000/svg" width="\d{1,4}" height="\d{1,4}" class="segno">'
    r'<path transform="scale\(\d{1,2}\)" class="qrline" stroke="#000" d="[Mmhv0-9. -]*"/>'
    r"</svg>\n?"
)
"""The whole of the SVG the TOTP adapter (``adapters.mfa.totp``, segno) makes: one path of
moves and lines, nothing else (no script, no link, no attribute beyond these)."""


def qr_markup(svg: str) -> Markup | None:
    """``svg`` marked safe for the template when it matches the TOTP adapter's output exactly
    (``_SEGNO_SVG``), with ``role="img"`` and a label added; else None (not shown)."""
    if _SEGNO_SVG.fullmatch(svg) is None:
        return None
    labelled = svg.replace("<svg ", '<svg role="img" aria-label="QR code" ', 1)
    return Markup(labelled)  # noqa: S704 - checked above: our own SVG, whole-document match


async def totp_page(request: web.Request) -> web.Response:
    """GET /ui/account/totp → the page that starts turning two-step sign-in on (or, with it on,
    regenerates the recovery codes and turns it off)."""
    visit = await signed_in_visit(request, TOTP)
    if isinstance(visit, web.Response):
        return visit
    return page(request, "account_totp.html", {"mfa_enabled": visit.user.mfa_enabled})


async def start_totp(request: web.Request) -> web.Response:
    """POST /ui/account/totp → 200 the QR code, the secret and the code form (a pending
    enrolment, shown once, so no redirect); 303 to the re-authentication page for a stale
    login; 409 when MFA is on already."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    fresh = await fresh_visit(request, TOTP)
    if isinstance(fresh, web.Response):
        return fresh
    visit, recent = fresh
    enrolment = (
        await request.app[CONTAINER]
        .mfa_enrolment()
        .start(visit.user.id, FreshProof(recent_login=recent), client_of_request(request))
    )
    context = {"secret": enrolment.secret, "qr": qr_markup(enrolment.qr_svg),
               "otpauth_uri": enrolment.otpauth_uri}  # fmt: skip
    return page(request, "account_totp_setup.html", context)


async def confirm_totp(request: web.Request) -> web.Response:
    """POST /ui/account/totp/confirm ``code`` → 200 the ten recovery codes, shown once (MFA is
    on); 422 the code form again for a wrong code; 409 without a pending enrolment."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    visit = await signed_in_visit(request, TOTP)
    if isinstance(visit, web.Response):
        return visit
    try:
        codes = (
            await request.app[CONTAINER]
            .mfa_enrolment()
            .confirm(visit.user.id, form.get("code", "").strip())
        )
    except ValidationFailed:
        context = {"error": Text("The code does not match. Enter the code your app shows now.")}
        return page(request, "account_totp_setup.html", context, 422)
    return page(request, "account_recovery_codes.html", {"codes": codes})


async def regenerate_codes(request: web.Request) -> web.Response:
    """POST /ui/account/totp/recovery-codes → 200 ten new recovery codes, shown once (the old
    ones stop working); 303 to the re-authentication page for a stale login; 409 with MFA
    off."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    fresh = await fresh_visit(request, TOTP)
    if isinstance(fresh, web.Response):
        return fresh
    visit, recent = fresh
    codes = (
        await request.app[CONTAINER]
        .mfa_enrolment()
        .regenerate_recovery_codes(
            visit.user.id, FreshProof(recent_login=recent), client_of_request(request)
        )
    )
    return page(request, "account_recovery_codes.html", {"codes": codes})


async def disable_totp(request: web.Request) -> web.Response:
    """POST /ui/account/totp/disable ``password`` → 303 to /ui/account/done (MFA off, as
    ``DELETE /me/mfa``); 403 the page again for a wrong password (counted), 429."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    visit = await signed_in_visit(request, TOTP)
    if isinstance(visit, web.Response):
        return visit
    try:
        await (
            request.app[CONTAINER]
            .mfa_enrolment()
            .disable(visit.user.id, form.get("password", ""), client_of_request(request))
        )
    except (InvalidOldPassword, RateLimited) as e:
        return refused(request, "account_totp.html", {"mfa_enabled": True}, e)
    return see_other(request, "/ui/account/done?action=mfa-off")


_CONFLICT = {409: "HTML page"}

ROUTES = [
    get(TOTP, totp_page, "The two-step sign-in page"),
    post(TOTP, start_totp, "Start turning two-step sign-in on (the QR code, shown once)",
         {200: "HTML page", **_CONFLICT}),
    post("/ui/account/totp/confirm", confirm_totp,
         "Turn two-step sign-in on with a code (the recovery codes, shown once)",
         {200: "HTML page", 422: "HTML page", **_CONFLICT}),
    post("/ui/account/totp/recovery-codes", regenerate_codes,
         "New recovery codes (shown once)", {200: "HTML page", **_CONFLICT}),
    post("/ui/account/totp/disable", disable_totp, "Turn two-step sign-in off",
         {429: "HTML page"}),
]  # fmt: skip
"""The account page's two-step sign-in routes (docs/reference/mfa-and-passkeys.md)."""
