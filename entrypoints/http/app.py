"""The aiohttp application factory."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web
from aiohttp_middlewares.cors import cors_middleware

from adapters.mail.console import CONSOLE_WARNING
from application.shared.outbox import BATCH
from entrypoints.cluster import follow_peers, maintain_keys
from entrypoints.container import Container
from entrypoints.http import (
    actuator_routes,
    admin_routes,
    assets,
    audit_routes,
    auth_routes,
    client_routes,
    consent_routes,
    device_routes,
    email_change_routes,
    email_routes,
    federation_routes,
    forward_auth_routes,
    invitation_routes,
    mfa_routes,
    oauth_routes,
    oidc_routes,
    par_routes,
    passkey_routes,
    scim_routes,
    session_routes,
    webhook_routes,
    wellknown_routes,
)
from entrypoints.http.assets import asset
from entrypoints.http.console import routes as console_routes
from entrypoints.http.console.web import TEMPLATES as CONSOLE_TEMPLATES
from entrypoints.http.keys import BODY_TIMEOUT, CONTAINER
from entrypoints.http.middlewares import (
    anonymous_write_middleware,
    page_errors,
    problem_middleware,
    request_context_middleware,
    tracing_middleware,
)
from entrypoints.http.openapi import ROUTE_SPECS
from entrypoints.http.pages import account as page_account
from entrypoints.http.pages import account_apps as page_account_apps
from entrypoints.http.pages import account_email as page_account_email
from entrypoints.http.pages import account_mfa as page_account_mfa
from entrypoints.http.pages import account_passkeys as page_account_passkeys
from entrypoints.http.pages import account_security as page_account_security
from entrypoints.http.pages import account_sessions as page_account_sessions
from entrypoints.http.pages import device as page_device
from entrypoints.http.pages import federation as page_federation
from entrypoints.http.pages import invitation as page_invitation
from entrypoints.http.pages import logout as page_logout
from entrypoints.http.pages import passkey_routes as page_passkeys
from entrypoints.http.pages import recovery as page_recovery
from entrypoints.http.pages import routes as page_routes
from entrypoints.http.pages import signup as page_signup
from entrypoints.http.pages.web import TEMPLATES as PAGE_TEMPLATES
from entrypoints.http.pages.web import setup_templates
from entrypoints.http.routing import RouteSpec, add_routes
from service_actuator.aiohttp import metrics_middleware, setup_actuator


async def _resources(app: web.Application) -> AsyncIterator[None]:
    """Open storage (applying migrations), load the signing keys, start the event bus (a broker
    bus connects in the background: an unreachable broker does not stop the start) and follow
    the peers' announcements; close the bus and storage and flush pending spans on exit, after
    the messages still under way in the outbox (up to ``server.shutdown_timeout`` seconds).
    With ``email.backend = "console"`` it says once that messages go to the log."""
    container = app[CONTAINER]
    storage = container.storage()
    if container.config().email.backend == "console":
        logging.getLogger("authsvc.email").warning(CONSOLE_WARNING)
    await storage.open()
    try:
        signer = await asyncio.to_thread(container.signer)  # generates keys on first start
        await asyncio.to_thread(container.secret_sealer)  # the MFA key, likewise
        bus = container.bus()
        follow_peers(bus, container.reloader(), signer)
        start = getattr(bus, "start", None)
        if start is not None:
            await start()
    except BaseException:
        await storage.close()
        raise
    try:
        yield
    finally:
        await container.outbox().drain(container.config().server.shutdown_timeout)
        close = getattr(bus, "close", None)
        if close is not None:
            await close()
        await storage.close()
        await container.upstream_client().close()
        await container.client_assertions().close()
        await container.backchannel_sender().close()
        await container.webhook_public_sender().close()
        await container.webhook_private_sender().close()
        await asyncio.to_thread(container.telemetry().shutdown)


log = logging.getLogger("authsvc.housekeeping")

CORS_REQUEST_HEADERS = ("authorization", "content-type", "dpop")
"""Request headers a browser on an allowed origin may send (``server.cors_origins``)."""
CORS_EXPOSED_HEADERS = ("dpop-nonce", "retry-after", "www-authenticate")
"""Response headers such a browser may read."""


async def purge_every(purge: Callable[[], Awaitable[int]], interval: float) -> None:
    """Run ``purge`` every ``interval`` seconds until cancelled. A failure (the database is
    away, say) is logged and the next round tries again; it never ends the loop."""
    while True:
        await asyncio.sleep(interval)
        try:
            deleted = await purge()
        except Exception as exc:
            log.warning("purge of expired tokens failed: %s: %s", type(exc).__name__, exc)
        else:
            log.info("purged %d expired token records", deleted)


OUTBOX_POLL_INTERVAL = 1.0
"""Seconds between two rounds of the outbox's delivery worker when the last round found less
than a full batch (docs/adr/0049-durable-outbox.md)."""


async def deliver_every(deliver: Callable[[], Awaitable[int]], interval: float) -> None:
    """Run outbox rounds until cancelled: the next at once after a full batch, else after
    ``interval`` seconds. The first round runs at once, so what a stopped instance left is
    delivered at start. A failure (the database is away, say) is logged and the next round
    tries again; it never ends the loop."""
    while True:
        try:
            handled = await deliver()
        except Exception as exc:
            log.warning("outbox round failed: %s: %s", type(exc).__name__, exc)
            handled = 0
        if handled < BATCH:
            await asyncio.sleep(interval)


async def _housekeeping(app: web.Application) -> AsyncIterator[None]:
    """Purge expired tokens every ``storage.purge_interval`` seconds (0: never) while serving;
    keep the signing keys in step with the key store and rotate them on schedule
    (``entrypoints.cluster.maintain_keys``); probe the identity providers once at start
    (readiness component ``federation``: an unreachable one is logged and listed, not fatal);
    deliver the durable outbox (``deliver_every``), from the start."""
    container = app[CONTAINER]
    federation = container.federation_health()
    federation.probe_soon()
    interval = container.config().storage.purge_interval
    tasks = [
        asyncio.create_task(
            maintain_keys(container.signer(), container.auth_settings(), container.bus())
        )
    ]
    tasks.append(
        asyncio.create_task(deliver_every(container.deliver_outbox(), OUTBOX_POLL_INTERVAL))
    )
    if interval:
        tasks.append(asyncio.create_task(purge_every(container.purge_expired(), interval)))
    yield
    await federation.close()
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


def create_app(container: Container) -> web.Application:
    """The authsvc aiohttp app: routes of docs/reference/tokens-and-sessions.md and
    docs/reference/operations.md (the actuator under ``/actuator``), problem+json errors, a request
    body limit of ``server.max_body_bytes`` bytes (413 beyond) read within ``server.body_timeout``
    seconds (408 beyond), resources in ``cleanup_ctx``. (The header and keep-alive limits belong to
    the server that runs it: ``entrypoints.http.timeouts.ServingRunner``.)

    While serving, expired tokens are purged every ``storage.purge_interval`` seconds, and the
    signing keys are re-read every ``auth.key_poll_interval`` seconds and rotated every
    ``auth.key_rotation_interval`` seconds (0: never).

    Middlewares (``entrypoints.http.middlewares``), outermost first: CORS (with
    ``server.cors_origins``: preflights answered, no credentials), tracing (a span per
    request), HTTP metrics (``http_server_requests_total``,
    ``http_server_request_duration_seconds``), the limit on writes from anyone
    (``server.anonymous_write_rate``, 429 past it), problem+json, the hosted pages' error page,
    the audit log's request context (client address and user agent).
    Wiring done here, once per container: the service metrics (subscribed to the bus).

    Raises ``ConfigError`` (``telemetry.exporter = "otlp"`` without its package) and
    ``ServiceActuatorError`` (``PROMETHEUS_MULTIPROC_DIR`` is not a directory).
    """
    config = container.config()
    telemetry = container.telemetry()
    cors = [
        cors_middleware(
            origins=[o.rstrip("/") for o in config.server.cors_origins],
            allow_credentials=False,
            allow_headers=CORS_REQUEST_HEADERS,
            expose_headers=CORS_EXPOSED_HEADERS,
            max_age=600,
        )
    ] if config.server.cors_origins else []  # fmt: skip
    specs: list[RouteSpec] = [
        *auth_routes.ROUTES,
        *email_routes.ROUTES,
        *email_change_routes.ROUTES,
        *session_routes.ROUTES,
        *consent_routes.ROUTES,
        *mfa_routes.ROUTES,
        *passkey_routes.ROUTES,
        *federation_routes.ROUTES,
        *admin_routes.ROUTES,
        *audit_routes.ROUTES,
        *invitation_routes.ROUTES,
        *webhook_routes.ROUTES,
        *client_routes.ROUTES,
        *oauth_routes.ROUTES,
        *device_routes.ROUTES,
        *par_routes.ROUTES,
        *oidc_routes.ROUTES,
        *scim_routes.ROUTES,
        *page_routes.ROUTES,
        *page_logout.ROUTES,
        *page_recovery.ROUTES,
        *page_signup.ROUTES,
        *page_invitation.ROUTES,
        *page_passkeys.ROUTES,
        *page_federation.ROUTES,
        *page_account.ROUTES,
        *page_account_sessions.ROUTES,
        *page_account_apps.ROUTES,
        *page_account_security.ROUTES,
        *page_account_mfa.ROUTES,
        *page_account_passkeys.ROUTES,
        *page_account_email.ROUTES,
        *page_device.ROUTES,
        *console_routes.ROUTES,
        *assets.ROUTES,
        *wellknown_routes.ROUTES,
        *forward_auth_routes.ROUTES,
    ]
    app = web.Application(
        client_max_size=config.server.max_body_bytes,
        middlewares=[
            *cors,
            tracing_middleware(telemetry),
            metrics_middleware(container.metrics_registry()),
            anonymous_write_middleware,
            problem_middleware,
            request_context_middleware,
        ],
    )
    app[CONTAINER] = container
    app[BODY_TIMEOUT] = config.server.body_timeout
    container.service_metrics()
    live = container.live_config()
    setup_templates(
        app,
        lambda: live.current.ui.templates_dir,
        (PAGE_TEMPLATES, CONSOLE_TEMPLATES),
        {"asset": asset},
    )
    add_routes(app, page_errors(specs))
    setup_actuator(app, container.actuator())
    app[ROUTE_SPECS] = [*specs, *actuator_routes.route_specs(app)]
    app.cleanup_ctx.append(_resources)
    app.cleanup_ctx.append(_housekeeping)  # cleaned up first: stops before storage closes
    return app
