"""The address rule of a client's ``jwks_uri`` at registration and change
(docs/adr/0055-jwks-uri-address-rule.md; ``client_fields.check_jwks_uri``, the rule of webhook
URLs, ``domain.network.is_local_host``): ``localhost`` and IP literals on loopback, private,
link-local and other non-public networks are 422 naming ``jwks_uri`` unless
``oauth.allow_private_jwks_uri``; names and public literals pass (names are judged again after
resolution, at each fetch); the opt-out lets ``http`` on a loopback host through."""

from __future__ import annotations

import pytest

from application.oauth.client_fields import check_code_flow_values, check_jwks_uri
from application.shared.settings import AuthSettings
from domain.errors import ValidationFailed
from domain.network import is_local_host

PRIVATE = [
    "https://127.0.0.1/jwks", "https://127.8.9.10:8443/jwks", "https://10.0.0.7/jwks",
    "https://172.16.3.4/jwks", "https://192.168.1.1/jwks", "https://169.254.169.254/latest",
    "https://100.64.0.1/jwks", "https://0.0.0.0/jwks", "https://[::1]/jwks",
    "https://[fe80::1]/jwks", "https://[fd00::5]/jwks", "https://[::ffff:10.0.0.1]/jwks",
    "https://2130706433/jwks", "https://localhost/jwks", "https://LOCALHOST:8443/jwks",
    "https://localhost./jwks", "https://localhost.localdomain/jwks",
]  # fmt: skip


@pytest.mark.parametrize("uri", PRIVATE)
def test_a_private_or_loopback_host_is_refused_naming_jwks_uri(uri: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        check_jwks_uri(uri, allow_private=False)
    assert [e.field for e in refused.value.errors] == ["jwks_uri"]


@pytest.mark.parametrize("uri", PRIVATE)
def test_the_opt_out_lets_them_through(uri: str) -> None:
    assert check_jwks_uri(uri, allow_private=True) == uri


@pytest.mark.parametrize(
    "uri", ["https://keys.example/jwks", "https://8.8.8.8/jwks", "https://[2001:4860::8888]/k",
            "https://localtest.me/jwks"],
)  # fmt: skip
def test_public_literals_and_names_pass(uri: str) -> None:
    assert check_jwks_uri(uri, allow_private=False) == uri


def test_http_is_only_for_a_loopback_host_with_the_opt_out() -> None:
    assert check_jwks_uri("http://127.0.0.1:9/jwks", allow_private=True)
    for uri, allow in [("http://127.0.0.1:9/jwks", False), ("http://keys.example/jwks", True),
                       ("http://keys.example/jwks", False)]:  # fmt: skip
        with pytest.raises(ValidationFailed):
            check_jwks_uri(uri, allow_private=allow)


def test_the_code_flow_check_applies_the_rule_and_its_opt_out() -> None:
    settings = AuthSettings()
    values = {"jwks_uri": "https://10.1.2.3/jwks"}
    with pytest.raises(ValidationFailed) as refused:
        check_code_flow_values(values, settings)
    assert refused.value.errors[0].field == "jwks_uri"
    assert check_code_flow_values(values, settings, allow_private_jwks_uri=True) == values


@pytest.mark.parametrize(
    ("host", "local"),
    [("localhost", True), ("127.0.0.1", True), ("::1", True), ("10.0.0.1", True),
     ("8.8.8.8", False), ("example.com", False), ("localtest.me", False), ("", False)],
)  # fmt: skip
def test_is_local_host(host: str, local: bool) -> None:
    assert is_local_host(host) is local
