"""``authsvc serve [--workers N]``: one process, or N worker processes sharing one port, each
shutting down gracefully (docs/reference/operations.md).

With N > 1 the parent process prepares what must exist once (migrations applied, signing keys
created), points prometheus-client's multiprocess mode at a fresh directory (so
``/actuator/metrics`` aggregates every worker with no setting by the operator), starts N workers
that listen on the same port with ``SO_REUSEPORT`` (the kernel spreads connections over them),
forwards SIGTERM/SIGINT to every worker, restarts a worker that dies unexpectedly, and exits 0
once every worker has shut down cleanly.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import multiprocessing
import multiprocessing.connection
import multiprocessing.resource_tracker
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import NoReturn

from aiohttp import web

from entrypoints.config import Config, load_config
from entrypoints.config.infrastructure import ServerSettings
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from entrypoints.http.protocol_errors import install_protocol_error_filter
from entrypoints.http.timeouts import ServingRunner
from service_actuator.metrics import MULTIPROC_ENV, mark_process_dead

log = logging.getLogger("authsvc")

LOG_FORMAT = "%(asctime)s %(levelname)s [%(process)d] %(name)s %(message)s"
"""The log line format of every ``authsvc`` process (workers included)."""

STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
"""Signals that start a graceful shutdown."""


async def serve_until_signalled(
    app: web.Application,
    host: str,
    port: int,
    server: ServerSettings,
    refuse_traffic: Callable[[], None],
    *,
    reuse_port: bool = False,
) -> None:
    """Serve ``app`` on ``host:port`` until SIGTERM or SIGINT. Then: readiness DOWN at once
    (``refuse_traffic``), keep accepting for ``server.shutdown_delay`` seconds (so a load
    balancer stops sending traffic first), stop accepting, give requests in flight
    ``server.shutdown_timeout`` seconds (then cut them off), close storage; return normally
    (exit status 0). ``reuse_port`` lets several processes listen on one port (SO_REUSEPORT).
    While serving, slow and idle clients are cut off after ``server.header_timeout``,
    ``server.body_timeout`` and ``server.keepalive_timeout`` seconds (``ServingRunner``).
    Raises ``OSError`` when the address cannot be bound."""
    runner = ServingRunner(app, server)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, reuse_port=reuse_port or None)
        await site.start()
        log.info("serving on %s", ", ".join(str(a) for a in runner.addresses))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop.set)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # a worker blocked them
        await stop.wait()
        refuse_traffic()
        log.info(
            "shutting down: readiness DOWN; accepting for %ss, then %ss for requests in flight",
            server.shutdown_delay,
            server.shutdown_timeout,
        )
        await asyncio.sleep(server.shutdown_delay)
    finally:
        await runner.cleanup()
    log.info("stopped")


def exit_at_once(status: int) -> NoReturn:
    """End this process with ``status`` once serving is over and everything is closed: run the
    exit handlers (``atexit``: logging flushed, ...), flush stdout and stderr, then
    ``os._exit`` — skipping only the interpreter's teardown of its modules, which takes about
    a second with this many and would hold the exit after the last request (
    docs/reference/operations.md: the process exits as soon as the requests in flight are done).
    Only for a process that is ``authsvc`` itself (a worker, or ``main`` run as the program)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed or gone: nothing more can be said there
            pass
    os._exit(status)


def page_addresses(issuer: str) -> str:
    """The pages a person opens first, for the start log (docs/guides/walk-through.md):
    the login page, the account page, the console and the discovery document, under
    ``issuer`` (``auth.issuer``, the address clients use)."""
    base = issuer.rstrip("/")
    return (
        f"sign in: {base}/ui/login · your account: {base}/ui/account · "
        f"console: {base}/ui/admin · discovery: {base}/.well-known/openid-configuration"
    )


def serve_one(
    config: Config, host: str, port: int, config_path: str | None, *, reuse_port: bool = False
) -> None:
    """Build the app for ``config`` and serve it in this process until a signal (see
    ``serve_until_signalled``). Raises ``ServiceActuatorError`` (bad metrics directory),
    ``ConfigError``, ``StorageUnavailable``, ``SignerUnavailable``, ``OSError`` at start."""
    install_protocol_error_filter()
    container = build_container(config, config_path=config_path)
    app = create_app(container)
    if not reuse_port:  # one process: it names the pages (workers: their parent does, once)
        log.info("pages: %s", page_addresses(config.auth.issuer))
    asyncio.run(
        serve_until_signalled(
            app,
            host,
            port,
            config.server,
            container.readiness_state().refuse_traffic,
            reuse_port=reuse_port,
        )
    )


def _worker(config_path: str | None, host: str, port: int) -> None:
    """A worker process: read the configuration like the parent did, serve until a signal."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    # A SIGTERM (forwarded by the parent) or Ctrl-C that arrives while the worker is still
    # starting waits, blocked, until the server's own handler is in place: then it is a
    # graceful stop, not a death by signal.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        serve_one(load_config(config_path), host, port, config_path, reuse_port=True)
    except Exception as exc:
        log.error("worker %d cannot serve: %s", os.getpid(), exc)
        sys.exit(2)
    exit_at_once(0)


async def _prepare(config: Config) -> None:
    """Apply migrations and create the signing keys once, before any worker starts."""
    container = build_container(config)
    storage = container.storage()
    await storage.open()
    await asyncio.to_thread(container.signer)
    await storage.close()


def serve_workers(
    config: Config, host: str, port: int, config_path: str | None, workers: int
) -> int:
    """Run ``workers`` worker processes on ``host:port`` until SIGTERM/SIGINT; returns the exit
    status (0 when every worker shut down cleanly). A worker that dies while serving is
    restarted; one that cannot start (status 2) stops them all with status 2."""
    stopping = False
    running: list[BaseProcess] = []

    def forward(signum: int, _: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for process in running:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, forward) for sig in STOP_SIGNALS}
    try:
        asyncio.run(_prepare(config))
        if stopping:  # asked to stop before any worker started
            return 0
        log.info("pages: %s", page_addresses(config.auth.issuer))
        return _supervise(config_path, host, port, workers, running, forward, lambda: stopping)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _supervise(
    config_path: str | None,
    host: str,
    port: int,
    workers: int,
    running: list[BaseProcess],
    forward: Callable[[int, FrameType | None], None],
    stopping: Callable[[], bool],
) -> int:
    """Start the workers and watch them until every one has exited; the exit status."""
    metrics_dir = os.environ.get(MULTIPROC_ENV) or None
    own_dir = None
    if metrics_dir is None:
        own_dir = metrics_dir = tempfile.mkdtemp(prefix="authsvc-metrics-")
        os.environ[MULTIPROC_ENV] = metrics_dir
    context = multiprocessing.get_context("spawn")
    # Started now: starting it later would unblock SIGTERM inside ``start()`` (it blocks and then
    # unblocks SIGINT/SIGTERM around its own launch), defeating the mask a worker inherits.
    multiprocessing.resource_tracker.ensure_running()

    def start() -> BaseProcess:
        process = context.Process(target=_worker, args=(config_path, host, port), daemon=False)
        # The child inherits the blocked stop signals across exec, so a SIGTERM that arrives
        # while it is still importing waits for its server's handler (see ``_worker``).
        previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        return process

    for _ in range(workers):
        running.append(start())
    if stopping():  # a signal came while they were starting: make sure every one has it
        forward(signal.SIGTERM, None)
    log.info("started %d workers on %s:%d (metrics in %s)", workers, host, port, metrics_dir)
    status = 0
    try:
        while running:
            multiprocessing.connection.wait([p.sentinel for p in running], timeout=1.0)
            for process in [p for p in running if not p.is_alive()]:
                running.remove(process)
                process.join()
                code = process.exitcode
                if process.pid is not None:
                    mark_process_dead(process.pid, metrics_dir)
                if stopping():
                    if code != 0:
                        log.warning("worker %s exited with %s while stopping", process.pid, code)
                    status = status or (0 if code == 0 else 1)
                elif code == 2:
                    log.error("a worker could not start; stopping")
                    status = 2
                    forward(signal.SIGTERM, None)
                else:
                    log.warning("worker %s exited with %s; starting another", process.pid, code)
                    running.append(start())
    finally:
        if own_dir is not None:
            shutil.rmtree(own_dir, ignore_errors=True)
            os.environ.pop(MULTIPROC_ENV, None)
    log.info("all workers stopped")
    return status
