"""Configuration: TOML + AUTHSVC_<PREFIX>__<KEY>, validated, errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from application.shared.settings import AuthSettings
from entrypoints.config import Config, ConfigError, load_config


def test_no_file_no_env_gives_the_contract_defaults() -> None:
    config = load_config(None, environ={})
    assert config == Config()
    assert config.auth == AuthSettings()
    assert (config.auth.algorithm, config.auth.access_token_ttl) == ("RS256", 900)
    assert config.storage.backend == "sqlite"
    assert config.storage.sqlite_path == "~/.authsvc/authsvc.db"
    assert (config.server.host, config.server.port) == ("127.0.0.1", 8080)
    assert config.server.max_body_bytes == 65_536
    assert (config.server.header_timeout, config.server.body_timeout) == (5.0, 10.0)
    assert config.server.keepalive_timeout == 15.0
    assert (config.server.anonymous_write_rate, config.server.anonymous_write_burst) == (10.0, 50)
    assert config.actuator.show_details == "when_authorized"


def test_file_then_environment(tmp_path: Path) -> None:
    path = tmp_path / "authsvc.toml"
    path.write_text(
        '[auth]\naccess_token_ttl = 300\nissuer = "https://a.example"\n'
        '[server]\ntrusted_proxies = ["10.0.0.0/8"]\n'
    )
    env = {
        "AUTHSVC_AUTH__ACCESS_TOKEN_TTL": "60",
        "AUTHSVC_AUTH__AUDIENCE": "12345",  # a string field keeps digits as text
        "AUTHSVC_SERVER__TRUSTED_PROXIES": "127.0.0.1, ::1",
        "AUTHSVC_ACTUATOR__METRICS_REQUIRE_AUTH": "true",
    }
    config = load_config(path, environ=env)
    assert config.auth.access_token_ttl == 60
    assert config.auth.issuer == "https://a.example"
    assert config.auth.audience == "12345"
    assert config.server.trusted_proxies == ("127.0.0.1", "::1")
    assert config.actuator.metrics_require_auth is True


def test_config_path_from_environment(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[auth]\nalgorithm = "ML-DSA-65"\n')
    assert load_config(None, environ={"AUTHSVC_CONFIG": str(path)}).auth.algorithm == "ML-DSA-65"


@pytest.mark.parametrize(
    ("toml", "env", "key"),
    [
        ("[auth]\nnope = 1\n", {}, "auth.nope"),
        ("[nope]\nx = 1\n", {}, "nope"),
        ("", {"AUTHSVC_AUTH__NOPE": "1"}, "auth.nope"),
        ("", {"AUTHSVC_NOPE__X": "1"}, "nope.x"),
        ('[auth]\naccess_token_ttl = "soon"\n', {}, "auth.access_token_ttl"),
        ("", {"AUTHSVC_AUTH__ACCESS_TOKEN_TTL": "0"}, "auth.access_token_ttl"),
        ("", {"AUTHSVC_AUTH__ALGORITHM": "HS256"}, "auth.algorithm"),
        ("", {"AUTHSVC_AUTH__BCRYPT_ROUNDS": "true"}, "auth.bcrypt_rounds"),
        ("", {"AUTHSVC_STORAGE__BACKEND": "postgres"}, "storage.postgres_dsn"),
        ("", {"AUTHSVC_STORAGE__BACKEND": "mysql"}, "storage.backend"),
        ("", {"AUTHSVC_SERVER__PORT": "70000"}, "server.port"),
        ("", {"AUTHSVC_ACTUATOR__SHOW_DETAILS": "sometimes"}, "actuator.show_details"),
        ("auth = 5\n", {}, "auth"),
        # every key type: addresses/networks, URLs, host names, durations, strings
        ('[server]\ntrusted_proxies = ["not-an-ip"]\n', {}, "server.trusted_proxies"),
        ("", {"AUTHSVC_SERVER__TRUSTED_PROXIES": "10.0.0.0/33"}, "server.trusted_proxies"),
        ("", {"AUTHSVC_SERVER__HOST": "no such host!"}, "server.host"),
        ("", {"AUTHSVC_SERVER__SHUTDOWN_TIMEOUT": "0"}, "server.shutdown_timeout"),
        ("", {"AUTHSVC_SERVER__SHUTDOWN_DELAY": "-1"}, "server.shutdown_delay"),
        ("", {"AUTHSVC_SERVER__HEADER_TIMEOUT": "0"}, "server.header_timeout"),
        ("", {"AUTHSVC_SERVER__HEADER_TIMEOUT": "soon"}, "server.header_timeout"),
        ("", {"AUTHSVC_SERVER__BODY_TIMEOUT": "-1"}, "server.body_timeout"),
        ("", {"AUTHSVC_SERVER__BODY_TIMEOUT": "3601"}, "server.body_timeout"),
        ("", {"AUTHSVC_SERVER__KEEPALIVE_TIMEOUT": "0"}, "server.keepalive_timeout"),
        ('[server]\nkeepalive_timeout = "long"\n', {}, "server.keepalive_timeout"),
        ("", {"AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "-1"}, "server.anonymous_write_rate"),
        ("", {"AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "nan"}, "server.anonymous_write_rate"),
        ("", {"AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "inf"}, "server.anonymous_write_rate"),
        ("", {"AUTHSVC_SERVER__ANONYMOUS_WRITE_BURST": "0"}, "server.anonymous_write_burst"),
        ("[server]\nanonymous_write_burst = 2.5\n", {}, "server.anonymous_write_burst"),
        ("", {"AUTHSVC_AUTH__MFA_ISSUER": "Example:Co"}, "auth.mfa_issuer"),
        ("", {"AUTHSVC_AUTH__MFA_ISSUER": ""}, "auth.mfa_issuer"),
        ("", {"AUTHSVC_AUTH__MFA_ISSUER": "a\nb"}, "auth.mfa_issuer"),
        ("", {"AUTHSVC_AUTH__MFA_TOKEN_TTL": "0"}, "auth.mfa_token_ttl"),
        ("", {"AUTHSVC_AUTH__ISSUER": "localhost:8080"}, "auth.issuer"),
        ("", {"AUTHSVC_AUTH__ISSUER": "ftp://auth.example"}, "auth.issuer"),
        ("", {"AUTHSVC_AUTH__ISSUER": "http://auth.example:99999"}, "auth.issuer"),
        ("", {"AUTHSVC_TELEMETRY__OTLP_ENDPOINT": "collector:4318"}, "telemetry.otlp_endpoint"),
        ("", {"AUTHSVC_TELEMETRY__SERVICE_NAME": ""}, "telemetry.service_name"),
        (
            "",
            {
                "AUTHSVC_STORAGE__BACKEND": "postgres",
                "AUTHSVC_STORAGE__POSTGRES_DSN": "mysql://db/x",
            },
            "storage.postgres_dsn",
        ),
        ("", {"AUTHSVC_STORAGE__PURGE_INTERVAL": "-5"}, "storage.purge_interval"),
        ("", {"AUTHSVC_WEBHOOKS__DELIVERY_RETENTION": "3600"}, "webhooks.delivery_retention"),
        ("", {"AUTHSVC_WEBHOOKS__DELIVERY_RETENTION": "1e12"}, "webhooks.delivery_retention"),
        ("[webhooks]\ndelivery_retention = true\n", {}, "webhooks.delivery_retention"),
        ('[webhooks]\ndelivery_retention = "30d"\n', {}, "webhooks.delivery_retention"),
        ('[auth]\nkey_dir = "a\\u0000b"\n', {}, "auth.key_dir"),
        ("", {"AUTHSVC_ACTUATOR__INDICATOR_TIMEOUT": "0"}, "actuator.indicator_timeout"),
        ("", {"AUTHSVC_SERVER__CORS_ORIGINS": "*"}, "server.cors_origins"),
        ("", {"AUTHSVC_SERVER__CORS_ORIGINS": "https://app.example.com/x"}, "server.cors_origins"),
        ("", {"AUTHSVC_OAUTH__CLIENT_TOKEN_TTL": "0"}, "oauth.client_token_ttl"),
        ("", {"AUTHSVC_OAUTH__SECRET_GRACE": "-1"}, "oauth.secret_grace"),
        ('[[oauth.resources]]\naudience = "two words"\n', {}, "oauth.resources"),
        ('[[oauth.resources]]\nscopes = ["read"]\n', {}, "oauth.resources"),
        ('[[oauth.resources]]\naudience = "a"\nscopes = ["a b"]\n', {}, "oauth.resources"),
        ('[[oauth.resources]]\naudience = "a"\norg_id = ""\n', {}, "oauth.resources"),
        ('[[oauth.resources]]\naudience = "a"\nnope = 1\n', {}, "oauth.resources"),
        ('[[oauth.resources]]\naudience = "authsvc"\n', {}, "oauth.resources"),
        (
            "",
            {"AUTHSVC_OAUTH__RESOURCES": '[{audience = "a"}, {audience = "a"}]'},
            "oauth.resources",
        ),
        ("", {"AUTHSVC_WEBAUTHN__USER_VERIFICATION": "discouraged"}, "webauthn.user_verification"),
        ("", {"AUTHSVC_WEBAUTHN__RP_NAME": ""}, "webauthn.rp_name"),
        ("", {"AUTHSVC_WEBAUTHN__ORIGINS": "app.example.com"}, "webauthn.origins"),
        ("", {"AUTHSVC_WEBAUTHN__ORIGINS": "https://app.example.com/login"}, "webauthn.origins"),
        ("", {"AUTHSVC_WEBAUTHN__RP_ID": "example.com"}, "webauthn.rp_id"),  # issuer: localhost
        (
            "",
            {
                "AUTHSVC_WEBAUTHN__RP_ID": "example.com",
                "AUTHSVC_WEBAUTHN__ORIGINS": "https://app.example.com, https://evil.example.org",
            },
            "webauthn.rp_id",
        ),
    ],
)
def test_bad_configuration_names_the_key(
    tmp_path: Path, toml: str, env: dict[str, str], key: str
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_config(path, environ=env)
    assert info.value.key.startswith(key), info.value
    assert key in str(info.value)


def test_unreadable_or_invalid_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml", environ={})
    bad = tmp_path / "bad.toml"
    bad.write_text("[auth\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad, environ={})


def test_changed_prefixes() -> None:
    base = load_config(None, environ={})
    other = load_config(None, environ={"AUTHSVC_AUTH__LEEWAY": "5", "AUTHSVC_SERVER__PORT": "9000"})
    assert base.changed_prefixes(other) == ["auth", "email", "server"]  # links follow the port
    assert base.changed_prefixes(base) == []


def test_the_relying_party_defaults_to_the_issuer_and_accepts_subdomains() -> None:
    from application.passkeys.settings import relying_party

    config = load_config(environ={"AUTHSVC_AUTH__ISSUER": "https://Auth.Example.com"})
    rp = relying_party(config.auth.issuer, config.webauthn)
    assert (rp.rp_id, rp.origins, rp.user_verification) == (
        "auth.example.com",
        ("https://auth.example.com",),
        "required",
    )
    config = load_config(environ={
        "AUTHSVC_AUTH__ISSUER": "https://auth.example.com",
        "AUTHSVC_WEBAUTHN__RP_ID": "example.com",
        "AUTHSVC_WEBAUTHN__ORIGINS": "https://app.example.com, https://example.com:8443",
    })  # fmt: skip
    rp = relying_party(config.auth.issuer, config.webauthn)
    assert rp.rp_id == "example.com"
    assert rp.origins == ("https://app.example.com", "https://example.com:8443")


def test_oauth_resources_from_the_file_and_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[[oauth.resources]]\naudience = "https://api.acme.example"\n'
                    'scopes = ["read", "write"]\norg_id = "acme"\n\n'
                    '[[oauth.resources]]\naudience = "billing"\n')  # fmt: skip
    resources = load_config(path, environ={}).oauth.resources
    assert [(r.audience, r.scopes, r.org_id) for r in resources] == [
        ("https://api.acme.example", ("read", "write"), "acme"), ("billing", (), None)]  # fmt: skip
    env = {"AUTHSVC_OAUTH__RESOURCES": '[{audience = "urn:x", scopes = ["a"]}]'}
    assert load_config(environ=env).oauth.resources[0].audience == "urn:x"
    assert load_config(environ={}).oauth.resources == ()


def test_the_issuer_and_mail_links_follow_the_port_unless_set() -> None:
    """auth.issuer defaults to http://localhost:{server.port}; email.verify_url and reset_url
    to the hosted pages under the issuer in force; whatever is set is kept."""
    config = load_config(None, environ={"AUTHSVC_SERVER__PORT": "9000"})
    assert config.auth.issuer == "http://localhost:9000"
    assert config.email.verify_url == "http://localhost:9000/ui/verify?token={token}"
    assert config.email.reset_url == "http://localhost:9000/ui/reset?token={token}"
    config = load_config(None, environ={"AUTHSVC_SERVER__PORT": "9000",
                                        "AUTHSVC_AUTH__ISSUER": "https://id.example.com/",
                                        "AUTHSVC_EMAIL__RESET_URL": "https://app.example/r/{token}"})  # fmt: skip
    assert config.auth.issuer == "https://id.example.com/"
    assert config.email.verify_url == "https://id.example.com/ui/verify?token={token}"
    assert config.email.reset_url == "https://app.example/r/{token}"


def test_a_bad_port_or_issuer_is_still_refused_naming_the_key() -> None:
    for environ, key in (({"AUTHSVC_SERVER__PORT": "70000"}, "server.port"),
                         ({"AUTHSVC_AUTH__ISSUER": "ftp://x"}, "auth.issuer")):  # fmt: skip
        with pytest.raises(ConfigError) as caught:
            load_config(None, environ=environ)
        assert caught.value.key == key


def test_the_webhook_delivery_retention_defaults_to_30_days_and_takes_a_number_of_seconds() -> None:
    assert load_config(None, environ={}).webhooks.delivery_retention == 2_592_000
    environ = {"AUTHSVC_WEBHOOKS__DELIVERY_RETENTION": "86400"}
    assert load_config(None, environ=environ).webhooks.delivery_retention == 86_400
