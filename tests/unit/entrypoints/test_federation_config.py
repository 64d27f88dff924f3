"""``[[federation.providers]]`` (docs/reference/federation.md): validated at start naming the bad
key, re-read by a refresh (UP-12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.events.inprocess import InProcessEventBus
from application.shared.settings import Live
from entrypoints.config import ConfigError, load_config
from entrypoints.config.refresh import ConfigReloader, ConfigSource
from service_actuator import InvalidConfiguration

GOOD = """
[[federation.providers]]
id = "google"
name = "Google"
issuer = "https://accounts.google.com"
client_id = "abc"
client_secret = "s3cret-value"
trust_email = true
allowed_domains = ["example.com"]

[[federation.providers]]
id = "gh"
name = "GitHub"
kind = "github"
client_id = "gh-client"
client_secret = "gh-secret"
"""


def _load(tmp_path: Path, text: str):
    path = tmp_path / "authsvc.toml"
    path.write_text(text)
    return load_config(path, environ={})


def test_providers_are_read_with_their_defaults(tmp_path: Path) -> None:
    config = _load(tmp_path, GOOD)
    google, github = config.federation.providers
    assert (google.kind, google.scopes, google.create_users, google.enabled) == (
        "oidc", ("openid", "email", "profile"), True, True)  # fmt: skip
    assert google.trust_email and google.allows_domain("a@example.com")
    assert not google.allows_domain("a@evil.com")
    assert github.scopes == ("read:user", "user:email")
    assert github.upstream().issuer == "https://github.com"


def test_the_client_secret_is_never_in_the_settings_repr(tmp_path: Path) -> None:
    """UP-12: the client secret never appears in logs (nothing prints it)."""
    config = _load(tmp_path, GOOD)
    assert "s3cret-value" not in repr(config)
    assert "s3cret-value" not in repr(config.federation.providers[0].upstream())


def _provider(**fields: str) -> str:
    base = {"id": '"p"', "name": '"P"', "client_id": '"c"', "issuer": '"https://idp.example"'}
    base.update(fields)
    return "[[federation.providers]]\n" + "".join(f"{k} = {v}\n" for k, v in base.items() if v)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (_provider(issuer='"http://idp.example"'), "federation.providers[0].issuer"),
        (_provider(issuer=""), "federation.providers[0].issuer"),
        (_provider(id='"Not OK"'), "federation.providers[0].id"),
        (_provider(kind='"saml"'), "federation.providers[0].kind"),
        (_provider(scopes='["a b"]'), "federation.providers[0].scopes"),
        (_provider(allowed_domains='["Example.COM"]'), "federation.providers[0].allowed_domains"),
        (_provider(extra="1"), "federation.providers[0].extra"),
        (
            _provider(client_secret_file='"/nonexistent/secret"'),
            "federation.providers[0].client_secret_file",
        ),
        (
            _provider(client_secret='"a"', client_secret_file='"/x"'),
            "federation.providers[0].client_secret",
        ),
        (_provider() + _provider(), "federation.providers"),
    ],
)
def test_a_bad_provider_is_refused_at_start_naming_the_key(
    tmp_path: Path, text: str, key: str
) -> None:
    """UP-12: an http issuer off loopback and every other bad value are refused at start."""
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, text)
    assert raised.value.key == key


def test_an_http_issuer_on_loopback_is_accepted(tmp_path: Path) -> None:
    config = _load(tmp_path, _provider(issuer='"http://127.0.0.1:9000"'))
    assert config.federation.providers[0].issuer == "http://127.0.0.1:9000"


def test_a_secret_file_is_accepted(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("from-a-file\n")
    config = _load(tmp_path, _provider(client_secret_file=f'"{secret}"'))
    assert config.federation.providers[0].client_secret_file == str(secret)


async def test_a_refresh_re_reads_the_provider_list(tmp_path: Path) -> None:
    path = tmp_path / "authsvc.toml"
    path.write_text(_provider())
    source = ConfigSource(path, environ={})
    live = Live(source.load())
    reload = ConfigReloader(live, InProcessEventBus(), source)
    path.write_text(_provider(enabled="false") + _provider(id='"q"', name='"Q"'))
    result = await reload()
    assert result.changed == ["federation"]
    assert live.current.federation.provider("p") is None  # disabled
    assert live.current.federation.provider("q") is not None
    path.write_text(_provider(issuer='"ftp://x"'))
    with pytest.raises(InvalidConfiguration):
        await reload()
    assert live.current.federation.provider("q") is not None
