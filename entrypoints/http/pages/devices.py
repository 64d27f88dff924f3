"""The device a session was started from, as the account page names it
(docs/reference/tokens-and-sessions.md, "Sessions on the account page"): the login's
``User-Agent`` read by ua-parser (uap-core's rules; ``docs/adr/0044-account-page-sessions.md``).

Only a name for people: the header is whatever the client sent, so nothing decides anything
on it.
"""

from __future__ import annotations

from functools import lru_cache

from ua_parser import parse

__all__ = ["SHORT_USER_AGENT", "device_name"]

SHORT_USER_AGENT = 60
"""A header no rule recognizes is shown cut to this many characters (the stored value is at most
``domain.model.USER_AGENT_MAX_LENGTH``)."""
_OTHER = "Other"
"""ua-parser's family when no rule matched."""


def _known(family: str | None) -> str | None:
    return family if family and family != _OTHER else None


@lru_cache(maxsize=1024)
def device_name(user_agent: str | None) -> str | None:
    """A short name for the device behind ``user_agent``: "Firefox 133 on Windows", "Mobile
    Safari 17 on iOS (iPhone)", "curl 8" — the browser (or client) family with its major
    version, the operating system and the device's model when the rules know them. A header
    no rule recognizes comes back cut to ``SHORT_USER_AGENT`` characters (with "…"); None (or
    blank) gives None, which the page shows as "Unknown device"."""
    if user_agent is None or not user_agent.strip():
        return None
    result = parse(user_agent)
    browser = result.user_agent
    name = _known(browser.family if browser else None)
    if name and browser is not None and browser.major:
        name = f"{name} {browser.major}"
    system = _known(result.os.family if result.os else None)
    model = _known(result.device.family if result.device else None)
    if name is None and system is None:
        text = " ".join(user_agent.split())
        return text if len(text) <= SHORT_USER_AGENT else text[: SHORT_USER_AGENT - 1] + "…"
    described = " on ".join(part for part in (name, system) if part)
    if model and model not in described:
        described = f"{described} ({model})"
    return described
