"""Second-factor adapters: TOTP (RFC 6238) on pyotp with QR codes by segno."""
