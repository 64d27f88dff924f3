"""A browser walk through the hosted pages or the console (docs/reference/console.md): one
Playwright page in its own context at a viewport width and a locale, checked at each step — axe-core finds no serious or critical violation, the page has no
horizontal scroll, and a full-page screenshot is kept under ``tests/artifacts/<folder>/``
(git-ignored; the run's artifacts). Script errors and CSP refusals are collected.

``WIDTHS`` and ``LOCALES`` are the grid every self-service action is proven on (390 px, a
phone; 1280 px, a laptop; English and German)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Page

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
SEVERE = ("serious", "critical")
WIDTHS = (390, 1280)
"""Viewport widths (CSS pixels) every page is checked at."""
LOCALES = ("en", "de")
"""The languages every page is checked in (the browser's ``Accept-Language``)."""


class Walk:
    """One browser context's walk: axe on each page, no horizontal scroll, a screenshot of each,
    script and CSP errors collected in ``console_errors``. Screenshots are
    ``tests/artifacts/<folder>/<name>-<shot>.png``."""

    def __init__(self, page: Page, axe: str, name: str, folder: str = "admin-console") -> None:
        self.page, self._axe, self._name = page, axe, name
        self._folder = ARTIFACTS / folder
        self.console_errors: list[str] = []
        page.on("console", self._console)

    @classmethod
    async def open(
        cls, browser: Browser, axe: str, name: str, *, folder: str, width: int = 1280,
        locale: str = "en",
    ) -> Walk:  # fmt: skip
        """A new context ``width`` px wide (900 high) whose ``Accept-Language`` and
        ``navigator.language`` are ``locale``; the screenshots' names carry both."""
        context = await browser.new_context(viewport={"width": width, "height": 900}, locale=locale)
        context.set_default_timeout(10_000)
        return cls(await context.new_page(), axe, f"{name}-{locale}-{width}", folder)

    def _console(self, message: Any) -> None:
        """Script errors and CSP refusals (a 404 page or favicon load is no script error)."""
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.console_errors.append(message.text)

    async def check(self, shot: str) -> None:
        """axe-core finds no serious or critical violation here; the page is no wider than the
        viewport (no horizontal scroll); a full-page screenshot."""
        await self.page.evaluate(self._axe)
        assert await self.page.evaluate("typeof axe.run") == "function"
        result = await self.page.evaluate(
            "axe.run(document, {resultTypes: ['violations']})"
            ".then(r => r.violations.map(v => ({id: v.id, impact: v.impact,"
            " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)})))"
        )
        severe = [v for v in result if v["impact"] in SEVERE]
        assert severe == [], f"{self.page.url}: {severe}"
        widths = await self.page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert widths[0] <= widths[1], f"{self.page.url} scrolls sideways: {widths}"
        self._folder.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(self._folder / f"{self._name}-{shot}.png"),
                                   full_page=True)  # fmt: skip
