"""TOTP (RFC 6238) on pyotp, QR codes on segno (docs/reference/mfa-and-passkeys.md).

The algorithm, the base32 secrets and the ``otpauth://`` Key Uri Format are pyotp's; the QR
code is segno's SVG. What this adapter adds is the policy the contract fixes: SHA-1, 6 digits,
30 s steps, one step of skew either way, and the matched step returned so the caller can accept
each code once.
"""

from __future__ import annotations

import hmac
import io
from datetime import datetime

import pyotp
import segno

from application.ports import Totp

DIGITS = 6
PERIOD = 30
"""Seconds per time step (RFC 6238 section 4: X = 30)."""
SECRET_LENGTH = 32
"""Base32 characters of a new secret: 160 bits, the HMAC-SHA-1 key size RFC 4226 recommends."""


class PyotpTotp(Totp):
    """``Totp`` on pyotp: SHA-1, 6 digits, 30 s."""

    def new_secret(self) -> str:
        """A new random base32 secret (32 characters, 160 bits, from ``secrets``)."""
        return pyotp.random_base32(SECRET_LENGTH)

    def provisioning_uri(self, secret: str, account: str, issuer: str) -> str:
        """``otpauth://totp/ISSUER:ACCOUNT?secret=...&issuer=ISSUER`` (pyotp's encoding)."""
        return pyotp.TOTP(secret, digits=DIGITS, interval=PERIOD).provisioning_uri(
            name=account, issuer_name=issuer
        )

    def qr_svg(self, uri: str) -> str:
        """The QR code of ``uri`` as an SVG document (segno, error correction M, no XML
        declaration)."""
        out = io.BytesIO()
        segno.make_qr(uri, error="m").save(out, kind="svg", xmldecl=False, scale=4, border=2)
        return out.getvalue().decode("utf-8")

    def matching_step(self, secret: str, code: str, at: datetime, window: int = 1) -> int | None:
        """The step within ``window`` of ``at`` whose code is ``code``, else None. Every
        candidate is computed and compared in constant time (no early exit on a match)."""
        if len(code) != DIGITS or not code.isascii() or not code.isdigit():
            return None
        totp = pyotp.TOTP(secret, digits=DIGITS, interval=PERIOD)
        now_step = int(at.timestamp()) // PERIOD
        found: int | None = None
        for step in range(now_step - window, now_step + window + 1):
            candidate = totp.generate_otp(step)
            if hmac.compare_digest(candidate.encode(), code.encode()) and found is None:
                found = step
        return found
