"""The account page puts the TOTP QR code into the page unescaped only when it is exactly the TOTP
adapter's SVG (docs/reference/mfa-and-passkeys.md): anything else — a script, an event handler,
a link, a foreign element — is left out."""

from __future__ import annotations

import pytest

from adapters.mfa.totp import PyotpTotp
from entrypoints.http.pages.account_mfa import qr_markup


def _svg() -> str:
    totp = PyotpTotp()
    return totp.qr_svg(totp.provisioning_uri(totp.new_secret(), "a@example.com", 'Ex <&> "q"'))


def test_the_adapters_svg_is_marked_safe_with_a_label() -> None:
    markup = qr_markup(_svg())
    assert markup is not None
    assert str(markup).startswith('<svg role="img" aria-label="QR code" xmlns=')


@pytest.mark.parametrize(
    "tamper",
    [
        lambda s: s.replace("</svg>", "<script>alert(1)</script></svg>"),
        lambda s: s.replace('class="segno"', 'class="segno" onload="alert(1)"'),
        lambda s: s.replace('stroke="#000"', 'stroke="#000" href="javascript:alert(1)"'),
        lambda s: s.replace(' d="M', ' d="M"/><foreignObject/><path d="M'),
        lambda s: s + "<img src=x onerror=alert(1)>",
        lambda s: "<p>" + s,
    ],
)
def test_anything_else_is_left_out(tamper: object) -> None:
    assert callable(tamper)
    original = _svg()
    tampered = tamper(original)
    assert tampered != original
    assert qr_markup(tampered) is None
