"""The operator's command line (docs/reference/accounts.md): ``authsvc create-superadmin`` and
``authsvc users list | set-role | set-org``, run in-process through ``entrypoints.cli.main``
(and once as a script), over a SQLite database in a temporary directory."""

from __future__ import annotations

import asyncio
import getpass
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from domain.errors import AccountDisabled, InvalidCredentials
from domain.model import Role, User
from domain.policy import Principal
from entrypoints import cli, cli_users
from entrypoints.config import load_config
from entrypoints.container import Container, build_container
from tests.brokers import new_kek

T = TypeVar("T")
PASSWORD = "correct horse battery"
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The CLI's environment: storage and keys in ``tmp_path``, cheap bcrypt, no bootstrap
    password, no configuration file."""
    values = {
        "AUTHSVC_STORAGE__BACKEND": "sqlite",
        "AUTHSVC_STORAGE__SQLITE_PATH": str(tmp_path / "authsvc.db"),
        "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
        "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(cli_users.BOOTSTRAP_PASSWORD_ENV, raising=False)
    monkeypatch.delenv("AUTHSVC_CONFIG", raising=False)
    monkeypatch.setattr(getpass, "getpass", _no_prompt)
    return values


def _no_prompt(prompt: str = "") -> str:
    raise AssertionError(f"unexpected password prompt: {prompt!r}")


def run(*argv: str) -> int:
    """``authsvc ARGV...`` in-process; the exit status."""
    return cli.main(list(argv))


def with_container(action: Callable[[Container], Awaitable[T]]) -> T:
    """Run ``action`` against the CLI's storage (same environment), opening and closing it."""

    async def main() -> T:
        container = build_container(load_config())
        storage = container.storage()
        await storage.open()
        try:
            return await action(container)
        finally:
            await storage.close()

    return asyncio.run(main())


def register(email: str, password: str = PASSWORD) -> User:
    return with_container(lambda c: c.auth_service().register(email, password))


def user(email: str) -> User:
    async def find(c: Container) -> User:
        page = await c.list_users()(Principal("test", Role.SUPERADMIN, ""), limit=200)
        return next(u for u in page.items if u.email == email)

    return with_container(find)


def can_log_in(email: str, password: str) -> bool:
    async def attempt(c: Container) -> bool:
        try:
            await c.auth_service().login(email, password, "127.0.0.1")
        except InvalidCredentials:
            return False
        return True

    return with_container(attempt)


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("authsvc: ")
    return lines[0]


# --------------------------------------------------------------------------- create-superadmin


def test_create_superadmin_from_the_environment(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(cli_users.BOOTSTRAP_PASSWORD_ENV, PASSWORD)
    assert run("create-superadmin", "--email", "Root@Example.com") == 0
    out = capsys.readouterr().out
    assert "created superadmin root@example.com" in out
    root = user("root@example.com")
    assert root.role is Role.SUPERADMIN and root.org_id == "default"
    assert can_log_in("root@example.com", PASSWORD)
    # Running it again changes nothing and needs no password.
    monkeypatch.delenv(cli_users.BOOTSTRAP_PASSWORD_ENV)
    assert run("create-superadmin", "--email", "root@example.com") == 0
    assert "root@example.com is superadmin" in capsys.readouterr().out


def test_create_superadmin_in_an_organization(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cli_users.BOOTSTRAP_PASSWORD_ENV, PASSWORD)
    assert run("create-superadmin", "--email", "ops@example.com", "--org", "acme") == 0
    assert user("ops@example.com").org_id == "acme"


def test_create_superadmin_promotes_an_existing_user_without_a_prompt(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    existing = register("alice@example.com")
    assert existing.role is Role.VIEWER
    assert run("create-superadmin", "--email", "alice@example.com") == 0  # no prompt
    assert "password unchanged" in capsys.readouterr().out
    promoted = user("alice@example.com")
    assert promoted.id == existing.id and promoted.role is Role.SUPERADMIN
    assert can_log_in("alice@example.com", PASSWORD)


def test_create_superadmin_promotes_and_ignores_the_bootstrap_password(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    register("alice@example.com")
    monkeypatch.setenv(cli_users.BOOTSTRAP_PASSWORD_ENV, "another password")
    assert run("create-superadmin", "--email", "alice@example.com") == 0
    assert user("alice@example.com").role is Role.SUPERADMIN
    assert can_log_in("alice@example.com", PASSWORD)
    assert not can_log_in("alice@example.com", "another password")


def test_create_superadmin_asks_for_the_password_twice(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts: list[str] = []

    def typed(prompt: str = "") -> str:
        prompts.append(prompt)
        return PASSWORD

    monkeypatch.setattr(getpass, "getpass", typed)
    assert run("create-superadmin", "--email", "root@example.com") == 0
    assert len(prompts) == 2
    assert can_log_in("root@example.com", PASSWORD)


def test_create_superadmin_refuses_different_passwords(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = iter([PASSWORD, PASSWORD + "!"])
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": next(answers))
    assert run("create-superadmin", "--email", "root@example.com") == 1
    assert "do not match" in one_error_line(capsys.readouterr().err)
    assert with_container(lambda c: c.list_users()(Principal("t", Role.SUPERADMIN, ""))).items == ()


@pytest.mark.parametrize(
    ("email", "password", "message"),
    [
        ("root@example.com", "short", "password"),
        ("not-an-email", PASSWORD, "email"),
    ],
)
def test_create_superadmin_bad_input_is_one_line_and_status_1(
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    email: str,
    password: str,
    message: str,
) -> None:
    monkeypatch.setenv(cli_users.BOOTSTRAP_PASSWORD_ENV, password)
    assert run("create-superadmin", "--email", email) == 1
    assert message in one_error_line(capsys.readouterr().err)


# --------------------------------------------------------------------------- users


def _table(out: str) -> list[list[str]]:
    return [line.split() for line in out.strip().splitlines()]


def test_users_list(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    ids = {email: register(email).id for email in ("a@example.com", "b@example.com")}
    register("c@example.com")
    assert run("users", "set-org", "c@example.com", "acme") == 0
    capsys.readouterr()

    assert run("users", "list") == 0
    rows = _table(capsys.readouterr().out)
    assert rows[0] == ["id", "email", "role", "org"]
    assert sorted(row[1] for row in rows[1:]) == ["a@example.com", "b@example.com",
                                                  "c@example.com"]  # fmt: skip
    assert [row[0] for row in rows[1:]] == sorted(row[0] for row in rows[1:])
    assert ["" + ids["a@example.com"], "a@example.com", "viewer", "default"] in rows

    assert run("users", "list", "--org", "acme") == 0
    rows = _table(capsys.readouterr().out)
    assert [row[1:] for row in rows[1:]] == [["c@example.com", "viewer", "acme"]]

    assert run("users", "list", "--limit", "2") == 0
    captured = capsys.readouterr()
    assert len(_table(captured.out)) == 1 + 2
    assert "--limit" in captured.err


def test_users_list_walks_every_page(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    async def many(c: Container) -> None:
        for i in range(205):
            await c.auth_service().register(f"user{i:03}@example.com", PASSWORD)

    with_container(many)
    assert run("users", "list") == 0
    rows = _table(capsys.readouterr().out)[1:]
    assert len(rows) == 205 and len({row[0] for row in rows}) == 205


def test_users_set_role(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    alice = register("alice@example.com")
    assert run("users", "set-role", "Alice@Example.com", "org_admin") == 0
    assert capsys.readouterr().out.split() == [alice.id, "alice@example.com", "org_admin",
                                               "default"]  # fmt: skip
    assert user("alice@example.com").role is Role.ORG_ADMIN


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("users", "set-role", "alice@example.com", "god"), "role: must be one of"),
        (("users", "set-role", "nobody@example.com", "viewer"), "user not found"),
        (("users", "set-role", "root@example.com", "viewer"), "last superadmin"),
        (("users", "set-org", "nobody@example.com", "acme"), "user not found"),
        (("users", "set-org", "alice@example.com", " acme"), "org_id"),
        (("users", "set-org", "alice@example.com", ""), "org_id"),
        (("users", "disable", "nobody@example.com"), "user not found"),
        (("users", "disable", "root@example.com"), "last superadmin"),
        (("users", "delete", "root@example.com"), "last superadmin"),
        (("users", "delete", "not an email"), "email"),
    ],
)
def test_users_errors_are_one_line_and_status_1(
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
    message: str,
) -> None:
    register("alice@example.com")
    monkeypatch.setenv(cli_users.BOOTSTRAP_PASSWORD_ENV, PASSWORD)
    assert run("create-superadmin", "--email", "root@example.com") == 0
    capsys.readouterr()
    assert run(*argv) == 1
    captured = capsys.readouterr()
    assert message in one_error_line(captured.err)
    assert captured.out == ""
    assert user("alice@example.com").role is Role.VIEWER
    assert user("alice@example.com").org_id == "default"
    assert user("root@example.com").role is Role.SUPERADMIN
    assert not user("root@example.com").disabled


def test_users_disable_enable_delete(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    alice = register("alice@example.com")
    assert can_log_in("alice@example.com", PASSWORD)
    assert run("users", "disable", "Alice@Example.com") == 0
    assert capsys.readouterr().out.split() == [alice.id, "alice@example.com", "viewer", "default",
                                               "disabled"]  # fmt: skip
    assert user("alice@example.com").disabled
    with pytest.raises(AccountDisabled):
        can_log_in("alice@example.com", PASSWORD)
    assert run("users", "enable", "alice@example.com") == 0
    assert capsys.readouterr().out.split() == [alice.id, "alice@example.com", "viewer", "default"]
    assert can_log_in("alice@example.com", PASSWORD)
    assert run("users", "delete", "alice@example.com") == 0
    assert capsys.readouterr().out == "deleted alice@example.com\n"
    assert register("alice@example.com").id != alice.id  # the email is free again


def test_users_set_org_drops_old_memberships(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    alice = register("alice@example.com")

    async def setup(c: Container) -> str:
        root = Principal("t", Role.SUPERADMIN, "default")
        group = await c.create_group()(root, "team")
        await c.add_member()(root, group.group.id, alice.id)
        return group.group.id

    group_id = with_container(setup)
    assert run("users", "set-org", "alice@example.com", "acme") == 0
    assert capsys.readouterr().out.split()[-1] == "acme"
    assert user("alice@example.com").org_id == "acme"

    async def members(c: Container) -> Any:
        return await c.get_group()(Principal("t", Role.SUPERADMIN, "default"), group_id)

    assert with_container(members).members == ()


def test_usage_errors_exit_2(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["users"], ["users", "set-role", "a@example.com"], ["create-superadmin"],
                 ["users", "list", "--limit", "0"]):  # fmt: skip
        with pytest.raises(SystemExit) as exc:
            run(*argv)
        assert exc.value.code == 2
    capsys.readouterr()


def test_as_a_script(env: dict[str, str]) -> None:
    environ = {**os.environ, **env, cli_users.BOOTSTRAP_PASSWORD_ENV: PASSWORD}
    command = [sys.executable, "-m", "entrypoints.cli"]
    done = subprocess.run([*command, "create-superadmin", "--email", "root@example.com"],
                          cwd=REPO, env=environ, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "created superadmin root@example.com" in done.stdout
    done = subprocess.run([*command, "users", "set-role", "root@example.com", "viewer"],
                          cwd=REPO, env=environ, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == "authsvc: the last superadmin cannot be demoted\n"
    done = subprocess.run([*command, "users", "list"], cwd=REPO, env=environ,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and "root@example.com" in done.stdout and done.stderr == ""


@pytest.mark.parametrize(
    ("name", "value", "key"),
    [
        ("AUTHSVC_SERVER__TRUSTED_PROXIES", "not-an-ip", "server.trusted_proxies"),
        ("AUTHSVC_AUTH__ISSUER", "localhost", "auth.issuer"),
        ("AUTHSVC_SERVER__SHUTDOWN_TIMEOUT", "-1", "server.shutdown_timeout"),
    ],
)
def test_serve_refuses_a_bad_value_at_start_naming_the_key(
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    value: str,
    key: str,
) -> None:
    """A bad value fails the start (status 2, one line naming the key), not a later request."""
    monkeypatch.setenv(name, value)
    assert run("serve", "--port", "0") == 2
    assert key in one_error_line(capsys.readouterr().err)


def test_purge_shrinks_the_token_table(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``authsvc purge`` deletes expired refresh tokens and keeps live ones."""
    import sqlite3
    import time

    register("alice@example.com")
    monkeypatch.setenv("AUTHSVC_AUTH__REFRESH_TOKEN_TTL", "1")
    with_container(lambda c: c.auth_service().login("alice@example.com", PASSWORD, "127.0.0.1"))
    with_container(lambda c: c.auth_service().login("alice@example.com", PASSWORD, "127.0.0.1"))
    monkeypatch.setenv("AUTHSVC_AUTH__REFRESH_TOKEN_TTL", "3600")
    live = with_container(
        lambda c: c.auth_service().login("alice@example.com", PASSWORD, "127.0.0.1")
    )

    def count() -> int:
        with sqlite3.connect(env["AUTHSVC_STORAGE__SQLITE_PATH"]) as conn:
            return int(conn.execute("SELECT count(*) FROM refresh_tokens").fetchone()[0])

    assert count() == 3
    time.sleep(1.1)
    capsys.readouterr()
    assert run("purge") == 0
    # The two expired tokens and the records of their sessions, left without a live token.
    assert capsys.readouterr().out == "purged 4 expired token records\n"
    assert count() == 1
    pair = with_container(lambda c: c.auth_service().refresh(live.refresh_token))
    assert pair.refresh_token


# --------------------------------------------------------------------------- keys (issue 16)


@pytest.mark.parametrize("store", ["file", "database"])
def test_keys_list_rotate_retire(
    env: dict[str, str],
    store: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AUTHSVC_AUTH__KEY_STORE", store)
    monkeypatch.setenv("AUTHSVC_AUTH__KEY_ENCRYPTION_KEY", new_kek())
    assert run("keys", "list") == 0
    first = capsys.readouterr().out.splitlines()
    assert first[0].split() == ["kid", "alg", "state", "signs_from", "signs_until",
                                "verifies_until"]  # fmt: skip
    old = first[1].split()[0]
    assert first[1].split()[1:3] == ["RS256", "signing"]

    assert run("keys", "rotate") == 0
    out = capsys.readouterr().out
    assert "in the JWKS now, signs from" in out and "auth.key_poll_interval" in out
    assert run("keys", "list") == 0
    states = {line.split()[0]: line.split()[2] for line in capsys.readouterr().out.splitlines()[1:]}
    assert states[old] == "signing" and sorted(states.values()) == ["pending", "signing"]

    # Domain-like refusals: one line, exit 1.
    assert run("keys", "retire", "--", old) == 1
    err = capsys.readouterr().err
    assert err.startswith("authsvc: key ") and "rotate --now" in err and err.count("\n") == 1
    assert run("keys", "retire", "--", "no-such-kid") == 1
    assert capsys.readouterr().err == "authsvc: no signing key with kid no-such-kid\n"

    # A leaked key: rotate now, then withdraw the old one.
    assert run("keys", "rotate", "--now") == 0
    capsys.readouterr()
    assert run("keys", "retire", "--", old) == 0
    assert "no longer in the JWKS" in capsys.readouterr().out
    assert run("keys", "list") == 0
    states = {line.split()[0]: line.split()[2] for line in capsys.readouterr().out.splitlines()[1:]}
    assert states[old] == "expired"


def test_keys_with_a_database_store_and_no_kek_exit_2(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUTHSVC_AUTH__KEY_STORE", "database")
    monkeypatch.delenv("AUTHSVC_AUTH__KEY_ENCRYPTION_KEY", raising=False)
    assert run("keys", "list") == 2
    assert capsys.readouterr().err.startswith(
        "authsvc: invalid configuration: auth.key_encryption_key:"
    )


def test_keys_retire_takes_a_kid_that_begins_with_a_dash() -> None:
    """A base64url kid (RFC 7638) may begin with ``-``; after ``--`` it is the KID, not an option."""
    from entrypoints.cli import build_parser

    assert build_parser().parse_args(["keys", "retire", "--", "-x9Qa"]).kid == "-x9Qa"


# --------------------------------------------------------------------------- several algorithms (issue 32)


@pytest.mark.parametrize("store", ["file", "database"])
def test_keys_per_algorithm(
    env: dict[str, str],
    store: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/reference/tokens-and-sessions.md: a signing key per listed algorithm; ``keys rotate
    --alg`` rotates that algorithm's key alone; one not listed is refused; ``keys list`` shows each
    algorithm's signing, pending (published ahead) and retiring keys."""
    monkeypatch.setenv("AUTHSVC_AUTH__KEY_STORE", store)
    monkeypatch.setenv("AUTHSVC_AUTH__KEY_ENCRYPTION_KEY", new_kek())
    monkeypatch.setenv("AUTHSVC_AUTH__ALGORITHMS", "RS256,ML-DSA-65")

    def listed() -> list[tuple[str, str, str]]:
        assert run("keys", "list") == 0
        rows = capsys.readouterr().out.splitlines()[1:]
        return sorted((r.split()[1], r.split()[2], r.split()[0]) for r in rows)

    first = listed()
    assert [(alg, state) for alg, state, _ in first] == [("ML-DSA-65", "signing"),
                                                          ("RS256", "signing")]  # fmt: skip
    assert run("keys", "rotate", "--alg", "ML-DSA-65") == 0
    assert capsys.readouterr().out.startswith("new ML-DSA-65 key ")
    assert [(alg, state) for alg, state, _ in listed()] == [
        ("ML-DSA-65", "pending"), ("ML-DSA-65", "signing"), ("RS256", "signing")]  # fmt: skip
    assert run("keys", "rotate", "--alg", "ML-DSA-87") == 1
    assert "not one of auth.algorithms" in capsys.readouterr().err

    # RS256 dropped from the list: its key stops signing and is retiring (still verifying).
    monkeypatch.setenv("AUTHSVC_AUTH__ALGORITHMS", "ML-DSA-65")
    monkeypatch.setenv("AUTHSVC_AUTH__ALGORITHM", "ML-DSA-65")
    rows = listed()
    assert ("RS256", "verifying") in [(alg, state) for alg, state, _ in rows]


def test_an_unknown_algorithm_in_the_list_exits_2_naming_the_key(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUTHSVC_AUTH__ALGORITHMS", "RS256,HS256")
    assert run("keys", "list") == 2
    assert capsys.readouterr().err.startswith("authsvc: invalid configuration: auth.algorithms:")
    monkeypatch.setenv("AUTHSVC_AUTH__ALGORITHMS", "ML-DSA-65")
    assert run("keys", "list") == 2
    assert "auth.algorithms" in capsys.readouterr().err
