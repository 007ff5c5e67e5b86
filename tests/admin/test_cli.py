"""`python -m app create-admin` / `create-token` as a person or a script would run them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.__main__ import main
from app.common.settings import Settings
from app.entry.main import create_app

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = {"DATABASE_URL": f"sqlite:///{tmp_path_factory.mktemp('cli') / 'admin.db'}"}
    assert _run(["migrate"], env).returncode == 0
    assert _run(["seed"], env).returncode == 0
    return env


def test_create_admin_from_stdin_then_a_token_that_opens_the_api(cli_env: dict[str, str]) -> None:
    created = _run(["create-admin", "Ops@Example.com", "--password-stdin"], cli_env, "a long enough secret\n")
    assert (created.returncode, created.stdout) == (0, "created admin ops@example.com\n")
    token = _run(["create-token", "ops@example.com", "--name", "deploy"], cli_env)
    assert token.returncode == 0
    last = token.stdout.strip().splitlines()[-1]
    assert last.startswith("gsz_") and len(last) == 47
    app = create_app(Settings(database_url=cli_env["DATABASE_URL"], env="test"))
    with TestClient(app) as client:
        assert client.get("/admin/api/skus", headers={"Authorization": f"Bearer {last}"}).status_code == 200
        assert client.get("/admin/api/skus", headers={"Authorization": "Bearer gsz_wrong"}).status_code == 401
        audit = client.get("/admin/api/audit", headers={"Authorization": f"Bearer {last}"}).json()
    assert [(i["action"], i["via"], i["after"]["name"]) for i in audit["items"]] == [("token.create", "cli", "deploy")]


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["create-admin", "short@example.com", "--password-stdin"], "short\n", "at least 12 characters"),
        (["create-admin", "not-an-email", "--password-stdin"], "a long enough secret\n", "is not an email address"),
        (["create-token", "ghost@example.com"], "", "no admin user ghost@example.com"),
        # blank and very common passwords (zxcvbn's dictionaries of leaked passwords and keyboard patterns)
        (["create-admin", "blank@example.com", "--password-stdin"], " " * 12 + "\n", "at least 12 characters"),
        (["create-admin", "common@example.com", "--password-stdin"], "password1234\n", "too common"),
        (["create-admin", "keys@example.com", "--password-stdin"], "qwertyuiop12\n", "too common"),
        (["create-admin", "mine@example.com", "--password-stdin"], "mine@example.com\n", "too common"),
    ],
)
def test_cli_errors_are_one_line(cli_env: dict[str, str], args: list[str], stdin: str, message: str) -> None:
    result = _run(args, cli_env, stdin)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"error: {result.stderr.strip()[7:]}"]
    assert message in result.stderr


def test_create_admin_twice_is_refused(cli_env: dict[str, str]) -> None:
    assert (
        _run(["create-admin", "twice@example.com", "--password-stdin"], cli_env, "a long enough secret\n").returncode
        == 0
    )
    again = _run(["create-admin", "twice@example.com", "--password-stdin"], cli_env, "another long secret\n")
    assert (again.returncode, again.stderr) == (1, "error: an admin user twice@example.com already exists\n")


def test_create_admin_prompts_twice_and_refuses_a_mismatch(
    cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", cli_env["DATABASE_URL"])
    answers = iter(["first long password", "second long password"])
    monkeypatch.setattr("getpass.getpass", lambda prompt: next(answers))
    assert main(["create-admin", "prompt@example.com"]) == 1
    assert capsys.readouterr().err == "error: the two passwords differ\n"
    answers = iter(["same long password", "same long password"])
    assert main(["create-admin", "prompt@example.com"]) == 0
    assert capsys.readouterr().out == "created admin prompt@example.com\n"
