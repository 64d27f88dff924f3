"""``[forward_auth]`` (docs/reference/forward-auth.md): validated at start, naming the bad key; rules
need a trusted proxy; paths of forwarded requests are normalized before the rules see them."""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.forward_auth import ForwardAuthRule
from entrypoints.config import Config, ConfigError, load_config
from entrypoints.http.forward_auth import normal_path

GOOD = """
[server]
trusted_proxies = ["10.0.0.0/8"]
[forward_auth]
hosts = ["app.example.com", "wiki.example.com:8443"]
cookie_domain = "example.com"
[[forward_auth.rules]]
host = "app.example.com"
path_prefix = "/admin"
groups = ["ops"]
[[forward_auth.rules]]
host = "wiki.example.com:8443"
roles = ["org_admin"]
"""


def _load(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "authsvc.toml"
    path.write_text(text)
    return load_config(path, environ={})


def test_a_good_configuration_is_read(tmp_path: Path) -> None:
    settings = _load(tmp_path, GOOD).forward_auth
    assert settings.domain_rules == (
        ForwardAuthRule("app.example.com", "/admin", (), ("ops",)),
        ForwardAuthRule("wiki.example.com:8443", "/", ("org_admin",), ()),
    )
    assert settings.returns_to("WIKI.example.com.:8443") and settings.returns_to("app.example.com")
    assert not settings.returns_to("app.example.com:444")


def test_the_default_is_no_rule_and_no_host() -> None:
    settings = Config().forward_auth
    assert (settings.hosts, settings.cookie_domain, settings.rules) == ((), "", ())


@pytest.mark.parametrize(("text", "key"), [
    ('[forward_auth]\nhosts = ["https://app.example.com"]', "forward_auth"),
    ('[forward_auth]\nhosts = ["App.example.com"]', "forward_auth"),
    ('[forward_auth]\nhosts = ["app.example.com:99999"]', "forward_auth"),
    ('[forward_auth]\ncookie_domain = ".example.com"', "forward_auth"),
    ('[server]\ntrusted_proxies = ["10.0.0.1"]\n[[forward_auth.rules]]\nhost = "a.example"\n',
     "forward_auth"),  # neither roles nor groups
    ('[server]\ntrusted_proxies = ["10.0.0.1"]\n[[forward_auth.rules]]\nhost = "a.example"\n'
     'roles = ["root"]', "forward_auth"),
    ('[server]\ntrusted_proxies = ["10.0.0.1"]\n[[forward_auth.rules]]\nhost = "a.example"\n'
     'path_prefix = "admin"\nroles = ["viewer"]', "forward_auth"),
    ('[[forward_auth.rules]]\nhost = "a.example"\nroles = ["viewer"]', "forward_auth.rules"),
])  # fmt: skip
def test_a_bad_value_is_refused_at_start_naming_its_key(
    tmp_path: Path, text: str, key: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    assert caught.value.key.startswith(key), caught.value


@pytest.mark.parametrize(("uri", "path"), [
    ("/", "/"), ("", "/"), ("/a/b?c=/admin", "/a/b"), ("/a/../admin", "/admin"),
    ("//admin", "/admin"), ("/a/%2e%2e/admin", "/admin"), ("/%61dmin/", "/admin"),
    ("/../../etc", "/etc"), ("/a#/admin", "/a"), ("/a/./b//c", "/a/b/c"),
])  # fmt: skip
def test_forwarded_paths_are_normalized_before_the_rules(uri: str, path: str) -> None:
    assert normal_path(uri) == path
