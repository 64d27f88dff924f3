"""TOTP enrolment, confirmation, recovery codes and removal (contract section 10)."""
