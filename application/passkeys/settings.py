"""Prefix ``webauthn`` (docs/reference/mfa-and-passkeys.md): the relying party of passkeys.

``rp_id`` (default: the host of ``auth.issuer``), ``rp_name`` (``"authsvc"``), ``origins`` (the
origins allowed in ``clientDataJSON``; default: the origin of ``auth.issuer``),
``user_verification`` (``required`` | ``preferred``), ``passwordless`` (default true: a
passkey alone logs in; false: a passkey only answers ``mfa_required``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import attrs
from attrs import validators as v

from application.ports import RelyingParty

__all__ = ["WebAuthnConfigError", "WebAuthnSettings", "relying_party"]


class WebAuthnConfigError(ValueError):
    """A ``webauthn`` setting that cannot work; ``key`` names it (``webauthn.origins`` ...)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@attrs.frozen
class WebAuthnSettings:
    """See the module docstring; checked against ``auth.issuer`` by ``relying_party``."""

    rp_id: str = attrs.field(default="", validator=v.max_len(253))
    rp_name: str = attrs.field(default="authsvc", validator=[v.min_len(1), v.max_len(100)])
    origins: tuple[str, ...] = ()
    user_verification: str = attrs.field(
        default="required", validator=v.in_(("required", "preferred"))
    )
    passwordless: bool = True


def _origin(url: str, key: str) -> tuple[str, str]:
    """``(origin, host)`` of ``url``: ``scheme://host[:port]`` with nothing after it."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise WebAuthnConfigError(key, f"{url!r} is not an http(s) origin")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise WebAuthnConfigError(key, f"{url!r} must be an origin only (scheme, host, port)")
    return f"{parts.scheme}://{parts.netloc.lower()}", parts.hostname.lower()


def relying_party(issuer: str, settings: WebAuthnSettings) -> RelyingParty:
    """The relying party of ``settings`` with its defaults taken from ``issuer`` (``auth.issuer``).

    Raises ``WebAuthnConfigError`` when an origin is not an http(s) origin, or its host is
    neither ``rp_id`` nor a subdomain of it (WebAuthn L3 §5.1.3: the RP ID must be a registrable
    suffix of the origin's host).
    """
    key = "webauthn.origins" if settings.origins else "auth.issuer"
    checked = [_origin(o, key) for o in (settings.origins or (issuer,))]
    rp_id = (settings.rp_id or checked[0][1]).lower()
    for origin, host in checked:
        if host != rp_id and not host.endswith("." + rp_id):
            raise WebAuthnConfigError(
                "webauthn.rp_id", f"{origin} is not {rp_id!r} or one of its subdomains"
            )
    return RelyingParty(
        rp_id, settings.rp_name, tuple(o for o, _ in checked), settings.user_verification
    )
