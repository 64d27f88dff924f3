"""Forward auth behind real reverse proxies (docs/guides/forward-auth.md): Debian's nginx
(``auth_request``) and Caddy (``forward_auth``) in front of a small app that shows the ``X-Auth-*``
headers it receives, each run by the test as its own process on a free port with the recipe's
configuration. Chromium (``AUTHSVC_TEST_CHROMIUM``) opens the app behind nginx, is sent to the login
page, signs in and lands on the app, which sees the user; the app behind Caddy then passes at once
(the protected hosts' cookie); a rule refuses a user without the group (403) until the group is
given; logout ends access behind both.

nginx and Caddy come from ``AUTHSVC_TEST_NGINX`` and ``AUTHSVC_TEST_CADDY`` (``.ci/run`` names
them, so a missing one fails); without those variables a missing binary skips, naming it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import Page, async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.browser.test_oidc_passkey_browser import FLAGS, chromium  # noqa: F401 - fixture
from tests.e2e.helpers import PASSWORD, bearer
from tests.e2e.http.test_actuator_http import superadmin_token
from tests.e2e.oidc_helpers import register_user
from tests.e2e.servers import free_port

NGINX_CONF = """
daemon off;
{user}
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {tmp}/nginx-body;
  proxy_temp_path {tmp}/nginx-proxy;
  fastcgi_temp_path {tmp}/nginx-fastcgi;
  uwsgi_temp_path {tmp}/nginx-uwsgi;
  scgi_temp_path {tmp}/nginx-scgi;
  server {{
    listen 127.0.0.1:{port};
    location = /_authsvc {{
      internal;
      proxy_pass http://127.0.0.1:{authsvc}/forward-auth;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Forwarded-Method $request_method;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Uri $request_uri;
      proxy_set_header X-Forwarded-For $remote_addr;
    }}
    location / {{
      auth_request /_authsvc;
      auth_request_set $auth_user $upstream_http_x_auth_user_id;
      auth_request_set $auth_email $upstream_http_x_auth_email;
      auth_request_set $auth_role $upstream_http_x_auth_role;
      auth_request_set $auth_org $upstream_http_x_auth_org;
      auth_request_set $auth_groups $upstream_http_x_auth_groups;
      auth_request_set $auth_login $upstream_http_location;
      error_page 401 = @authsvc_login;
      proxy_set_header X-Auth-User-Id $auth_user;
      proxy_set_header X-Auth-Email $auth_email;
      proxy_set_header X-Auth-Role $auth_role;
      proxy_set_header X-Auth-Org $auth_org;
      proxy_set_header X-Auth-Groups $auth_groups;
      proxy_pass http://127.0.0.1:{app};
    }}
    location @authsvc_login {{
      return 302 $auth_login;
    }}
  }}
}}
"""
"""The nginx recipe of docs/guides/forward-auth.md, with the test's ports and paths."""

CADDYFILE = """
{{
  admin off
  auto_https off
  storage file_system {tmp}/caddy-data
}}
http://localhost:{port} {{
  bind 127.0.0.1
  forward_auth 127.0.0.1:{authsvc} {{
    uri /forward-auth?redirect=1
    copy_headers X-Auth-User-Id X-Auth-Email X-Auth-Role X-Auth-Org X-Auth-Groups
  }}
  reverse_proxy 127.0.0.1:{app}
}}
"""
"""The Caddy recipe of docs/guides/forward-auth.md, with the test's ports and paths."""


def _binary(variable: str, default: str, package: str) -> str:
    named = os.environ.get(variable)
    found = named or shutil.which(default)
    if found is None or not Path(found).exists():
        if named:
            pytest.fail(f"{variable}={named} does not exist")
        pytest.skip(f"no {default}: apt-get install {package} (or set {variable})")
    return found


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: what the proxies see does not depend on the storage (both backends are
    ``tests/e2e/http/test_forward_auth.py``)."""
    return ("sqlite", "RS256")


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    for _ in range(200):
        if process.poll() is not None:
            raise AssertionError(f"exited {process.returncode}: {log.read_text(errors='replace')}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}: {log.read_text(errors='replace')}")


def _start(
    command: list[str], port: int, log: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    _wait_for_port(port, process, log)
    return process


@pytest.fixture
def ports() -> dict[str, int]:
    return {"authsvc": free_port(), "app": free_port(), "nginx": free_port(), "caddy": free_port()}


@pytest.fixture
def proxies(tmp_path: Path, ports: dict[str, int]) -> Iterator[None]:
    """nginx and Caddy in front of the app, each with its recipe; stopped at the end."""
    nginx = _binary("AUTHSVC_TEST_NGINX", "nginx", "nginx")
    caddy = _binary("AUTHSVC_TEST_CADDY", "caddy", "caddy")
    values = {**ports, "tmp": tmp_path, "port": ports["nginx"],
              "user": "user root;" if os.geteuid() == 0 else ""}  # fmt: skip
    (tmp_path / "nginx.conf").write_text(NGINX_CONF.format(**values), "utf-8")
    (tmp_path / "Caddyfile").write_text(CADDYFILE.format(**{**values, "port": ports["caddy"]}))
    env = {**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg-config")}  # fmt: skip
    started = [
        _start([nginx, "-e", str(tmp_path / "nginx-error.log"), "-p", str(tmp_path), "-c",
                str(tmp_path / "nginx.conf")], ports["nginx"], tmp_path / "nginx.out", env),
        _start([caddy, "run", "--adapter", "caddyfile", "--config", str(tmp_path / "Caddyfile")],
               ports["caddy"], tmp_path / "caddy.out", env),
    ]  # fmt: skip
    try:
        yield
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


async def _echo(request: web.Request) -> web.Response:
    """The protected app: who the proxy says the user is."""
    lines = [f"<p id='{name.lower()}'>{request.headers.get(name, '')}</p>"
             for name in ("X-Auth-User-Id", "X-Auth-Email", "X-Auth-Role", "X-Auth-Groups")]  # fmt: skip
    body = f"<!doctype html><title>app</title><h1>app {request.path_qs}</h1>{''.join(lines)}"
    return web.Response(text=body, content_type="text/html")


@pytest_asyncio.fixture
async def served(
    base_env: dict[str, str], tmp_path: Path, ports: dict[str, int], proxies: None
) -> AsyncIterator[TestClient]:
    """authsvc (trusting 127.0.0.1, returning to both proxies' hosts, ``/ops`` for group
    ``ops`` behind each) and the app, each on its port."""
    config = tmp_path / "authsvc.toml"
    rules = "".join(
        f'[[forward_auth.rules]]\nhost = "localhost:{ports[p]}"\npath_prefix = "/ops"\n'
        'groups = ["ops"]\n'
        for p in ("nginx", "caddy")
    )
    config.write_text(
        '[server]\ntrusted_proxies = ["127.0.0.1"]\n[forward_auth]\n'
        f'hosts = ["localhost:{ports["nginx"]}", "localhost:{ports["caddy"]}"]\n{rules}', "utf-8"
    )  # fmt: skip
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": f"http://localhost:{ports['authsvc']}"}
    environ.pop("AUTHSVC_AUTH__ALGORITHM", None)
    container = build_container(load_config(str(config), environ=environ), environ=environ)
    echo = web.Application()
    echo.router.add_get("/{tail:.*}", _echo)
    async with TestServer(echo, host="127.0.0.1", port=ports["app"]):
        server = TestServer(create_app(container), host="127.0.0.1", port=ports["authsvc"])
        async with TestClient(server) as client:
            yield client


async def _text(page: Page, element: str) -> str:
    return (await page.text_content(f"#{element}")) or ""


async def test_nginx_and_caddy_send_the_browser_to_the_login_and_pass_the_user(
    served: TestClient,
    ports: dict[str, int],
    chromium: str,  # noqa: F811
) -> None:
    issuer = f"http://localhost:{ports['authsvc']}"
    nginx, caddy = f"http://localhost:{ports['nginx']}", f"http://localhost:{ports['caddy']}"
    user_id = await register_user(served)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            page = await (await browser.new_context()).new_page()
            page.set_default_timeout(15_000)
            await page.goto(f"{nginx}/docs?page=2")
            await page.wait_for_url(f"{issuer}/ui/login?**")
            await page.fill("input[name=email]", "alice@example.com")
            await page.fill("input[name=password]", PASSWORD)
            await page.click("form[action='/ui/login'] button[type=submit]")
            await page.wait_for_url(f"{nginx}/docs?page=2")
            assert await _text(page, "x-auth-user-id") == user_id
            assert await _text(page, "x-auth-email") == "alice@example.com"
            assert await _text(page, "x-auth-role") == "viewer"
            response = await page.goto(f"{caddy}/reports")  # the same cookie: no login
            assert response is not None and response.status == 200
            assert await _text(page, "x-auth-email") == "alice@example.com"
            for proxy in (nginx, caddy):
                response = await page.goto(f"{proxy}/ops/board")
                assert response is not None and response.status == 403, proxy
            root = await superadmin_token(served)
            group = await served.post("/groups", json={"name": "ops"}, headers=bearer(root))
            group_id = (await group.json())["id"]
            added = await served.put(f"/groups/{group_id}/members/{user_id}", headers=bearer(root))
            assert added.status in (200, 204)
            for proxy in (nginx, caddy):
                response = await page.goto(f"{proxy}/ops/board")
                assert response is not None and response.status == 200, proxy
                assert await _text(page, "x-auth-groups") == "ops"
            await page.goto(f"{issuer}/ui/logout")
            await page.click("form[action='/ui/logout'] button[type=submit]")
            await page.wait_for_url(f"{issuer}/ui/signed-out")
            for proxy in (nginx, caddy):
                await page.goto(f"{proxy}/docs")
                await page.wait_for_url(f"{issuer}/ui/login?**")
        finally:
            await browser.close()
