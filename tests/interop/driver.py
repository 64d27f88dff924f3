"""The interop harness's Python half: the browser step (Playwright driving Debian's Chromium)
and the line protocol with the node scripts (see ``harness.mjs``).

A node script prints ``VISIT <url>``; :class:`UserAgent` opens it, lets the provider's
:class:`LoginSteps` fill and submit the login and consent pages it meets, and answers with the
URL the browser was finally sent to: a request to one of the ``stops`` (the client's
``redirect_uri`` or ``post_logout_redirect_uri``), which is answered here and never reaches the
network. Requests to any other host than the loopback are aborted (the test network is closed;
oidc-provider's pages import a web font)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from playwright.async_api import Browser, BrowserContext, Page, Route, async_playwright
from playwright.async_api import Error as PlaywrightError

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$")
STEP_TIMEOUT_MS = 15_000
SCRIPT_TIMEOUT_S = 45.0

NODE_PATH = os.environ.get("PATH", "/usr/bin:/bin")
"""The scripts get only this of the test's environment (no AUTHSVC_* settings, no secrets)."""

Action = Callable[[], Awaitable[None]]


class LoginSteps(Protocol):
    """How a user gets through one provider's pages (its login form, consent, logout prompt)."""

    async def next_action(self, page: Page) -> Action | None:
        """The submit to perform on the page shown now, or None when it is no page of ours."""


@dataclass(frozen=True)
class DevInteractions:
    """oidc-provider's development pages: any login and password; the login becomes ``sub``."""

    login: str

    async def next_action(self, page: Page) -> Action | None:
        if await page.locator("input[name=login]").count():
            await page.fill("input[name=login]", self.login)
            await page.fill("input[name=password]", "any")
            return lambda: page.click("button.login-submit")
        if await page.locator("input[name=prompt][value=consent]").count():
            return lambda: page.click("button.login-submit")
        if await page.locator("button[name=logout][value=yes]").count():
            return lambda: page.click("button[name=logout][value=yes]")
        return None


@dataclass(frozen=True)
class HostedPages:
    """authsvc's hosted pages (docs/reference/oauth-and-oidc.md): ``/ui/login`` (inputs ``email``,
    ``password``, hidden ``csrf_token``) and ``/ui/consent`` (buttons ``decision``)."""

    email: str
    password: str

    async def next_action(self, page: Page) -> Action | None:
        login = page.locator("form[action='/ui/login'] input[name=password]")
        if await login.count():
            await page.fill("form[action='/ui/login'] input[name=email]", self.email)
            await login.fill(self.password)
            return lambda: login.press("Enter")
        allow = page.locator("button[name=decision][value=allow]")
        if await allow.count():
            return lambda: allow.click()
        return None


@dataclass(frozen=True)
class SignUpPages:
    """A newcomer on authsvc's hosted pages (docs/guides/self-service.md): on ``/ui/login`` it
    follows "Create account", fills ``/ui/register`` (email, the password twice), waits on the
    "check your email" page for the verification mail (``mail_link(email)``: the link in it)
    and opens it in this browser, confirms on ``/ui/verify``, then allows on ``/ui/consent``."""

    email: str
    password: str
    mail_link: Callable[[str], Awaitable[str]]

    async def next_action(self, page: Page) -> Action | None:
        register = page.locator("a[href^='/ui/register?']")
        if "/ui/login" in page.url and await register.count():
            return lambda: register.click()
        if await page.locator("form[action='/ui/register'] input[name=password_again]").count():
            await page.fill("input[name=email]", self.email)
            await page.fill("input[name=password]", self.password)
            await page.fill("input[name=password_again]", self.password)
            return lambda: page.click("form[action='/ui/register'] button[type=submit]")
        if urlsplit(page.url).path == "/ui/register/check-mail":
            link = await self.mail_link(self.email)

            async def open_link() -> None:
                await page.goto(link, wait_until="domcontentloaded")

            return open_link
        confirm = page.locator("form[action='/ui/verify'] button[type=submit]")
        if await confirm.count():
            return lambda: confirm.click()
        allow = page.locator("button[name=decision][value=allow]")
        if await allow.count():
            return lambda: allow.click()
        return None


@dataclass
class UserAgent:
    """One browser profile (its own cookies: one user's browser) following the scripts' visits."""

    context: BrowserContext
    page: Page
    steps: LoginSteps
    stops: tuple[str, ...]
    trail: list[str] = field(default_factory=list)
    _landed: str | None = None
    _earlier: set[str] = field(default_factory=set)
    """The stop URLs of earlier visits: a request event of a past navigation can arrive late,
    during the next visit (seen with several flows in one event loop), and must not count as
    that visit's landing. Every real landing is a new URL (a fresh ``code`` or ``state``)."""

    @classmethod
    async def open(cls, browser: Browser, steps: LoginSteps, stops: tuple[str, ...]) -> UserAgent:
        context = await browser.new_context()
        agent = cls(context, await context.new_page(), steps, stops)
        await context.route("**/*", agent._route)
        # A redirect's follow-up request may not pass the route handler: catch it here too.
        agent.page.on("request", lambda request: agent._land(request.url))
        return agent

    def _land(self, url: str) -> None:
        if self._landed is None and url.startswith(self.stops) and url not in self._earlier:
            self._landed = url

    async def _route(self, route: Route) -> None:
        url = route.request.url
        if url.startswith(self.stops):
            self._land(url)
            await route.fulfill(status=200, content_type="text/plain", body="callback reached")
        elif urlsplit(url).hostname in LOOPBACK:
            await route.continue_()
        else:
            await route.abort()

    async def visit(self, url: str) -> str:
        """Open ``url``, act on the provider's pages, return the stop URL reached (or, when
        none was reached, the URL of the page the browser is stuck on)."""
        self._landed = None
        self.trail.append(f"VISIT {url}")
        try:
            await self.page.goto(url, wait_until="domcontentloaded", timeout=STEP_TIMEOUT_MS)
            previous = None
            for _ in range(8):  # the sign-up walk has six pages
                # Landed, or the same page again after a submit (a refused login): done.
                if self._landed is not None or self.page.url == previous:
                    break
                previous = self.page.url
                self.trail.append(f"  page {previous}")
                action = await self.steps.next_action(self.page)
                if action is None:
                    break
                async with self.page.expect_navigation(
                    wait_until="domcontentloaded", timeout=STEP_TIMEOUT_MS
                ):
                    await action()
        except PlaywrightError as err:
            if self._landed is None:
                self.trail.append(f"  error {err.message.splitlines()[0]}")
        if self._landed is None:
            try:
                text = await self.page.locator("body").inner_text(timeout=1000)
            except PlaywrightError:
                text = "(no page text)"
            self.trail.append(f"  stuck on {self.page.url}: {text[:300]!r}")
            return self.page.url
        self.trail.append(f"  landed {self._landed}")
        self._earlier.add(self._landed)
        return self._landed

    async def close(self) -> None:
        await self.context.close()


@asynccontextmanager
async def chromium_browser(executable: str) -> AsyncIterator[Browser]:
    """Debian's Chromium, headless, with the flags this closed network needs."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            yield browser
        finally:
            await browser.close()


@dataclass(frozen=True)
class ScriptRun:
    """A node script's outcome: its result object, counts, exit status and output."""

    result: dict[str, Any]
    passed: int
    failed: int
    returncode: int
    stderr: str

    def explain(self, agent: UserAgent) -> str:
        """Everything needed to see why it failed: the checks, the browser's trail, stderr."""
        checks = json.dumps(self.result.get("checks"), indent=1)
        return f"checks {checks}\nbrowser:\n" + "\n".join(agent.trail) + f"\nstderr:\n{self.stderr}"


async def run_script(
    folder: Path, script: str, env: Mapping[str, str], agent: UserAgent
) -> ScriptRun:
    """Run ``node <script>`` in ``folder`` with ``env``, answering its visits with ``agent``."""
    proc = await asyncio.create_subprocess_exec(
        "node", script, cwd=folder, env={"PATH": NODE_PATH, **env},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin and proc.stdout and proc.stderr
    errors = asyncio.ensure_future(proc.stderr.read())  # drained alongside: a full pipe blocks
    lines: list[str] = []
    try:
        async with asyncio.timeout(SCRIPT_TIMEOUT_S):
            while raw := await proc.stdout.readline():
                line = raw.decode().rstrip("\n")
                if line.startswith("VISIT "):
                    landed = await agent.visit(line.removeprefix("VISIT "))
                    proc.stdin.write(landed.encode() + b"\n")
                    await proc.stdin.drain()
                else:
                    lines.append(line)
            returncode = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    stderr = (await errors).decode(errors="replace")
    summary = SUMMARY.match(lines[-1]) if lines else None
    assert summary and len(lines) >= 2, f"{script}: no closing count line: {lines}\n{stderr}"
    return ScriptRun(json.loads(lines[-2]), int(summary[1]), int(summary[2]), returncode, stderr)


@asynccontextmanager
async def oidc_provider(folder: Path, redirect_uri: str, post_logout: str
                        ) -> AsyncIterator[dict[str, Any]]:  # fmt: skip
    """panva's oidc-provider (``op.mjs``) on an ephemeral loopback port; yields its first
    line: ``{"issuer", "clients": {"confidential", "public", "dpop"}}``."""
    proc = await asyncio.create_subprocess_exec(
        "node", "op.mjs", cwd=folder,
        env={"PATH": NODE_PATH, "REDIRECT_URI": redirect_uri,
             "POST_LOGOUT_REDIRECT_URI": post_logout},
        stdout=asyncio.subprocess.PIPE,  # stderr inherited: pytest shows it on a failure
    )  # fmt: skip
    assert proc.stdout
    try:
        first = await asyncio.wait_for(proc.stdout.readline(), timeout=20)
        assert first, "op.mjs exited before it listened"
        yield json.loads(first)
    finally:
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()
