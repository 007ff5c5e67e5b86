"""`python -m app create-admin EMAIL` and `python -m app create-token EMAIL` (wired in app/__main__.py).

There is no default password anywhere: create-admin asks twice (getpass) or reads one line from
standard input with --password-stdin, for scripts. create-token prints the token alone on its
last line, so `TOKEN=$(python -m app create-token me@example.com | tail -n1)` works.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from app.admin import repository, service
from app.common.errors import AppError
from app.common.settings import Settings
from app.db.engine import build_engine, build_sessionmaker, check_connection

ADMIN_COMMANDS = ("create-admin", "create-token")


def add_admin_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    create_admin = sub.add_parser("create-admin", help="create an admin user (prompts for the password)")
    create_admin.add_argument("email")
    create_admin.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    create_admin.add_argument("--role", choices=("admin", "viewer"), default="admin")
    create_token = sub.add_parser("create-token", help="create an API token for a user; prints it on the last line")
    create_token.add_argument("email")
    create_token.add_argument("--name", default="cli", help="a label to tell tokens apart")


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password (again): ") != first:
        raise ValueError("the two passwords differ")
    return first


def run_admin_command(args: argparse.Namespace, settings: Settings) -> int:
    engine = build_engine(settings.database_url)
    check_connection(engine)
    try:
        with build_sessionmaker(engine).begin() as session:
            if args.command == "create-admin":
                password = _read_password(args.password_stdin)
                user = service.create_user(session, email=args.email, password=password, role=args.role)
                print(f"created {user.role} {user.email}")
                return 0
            found = repository.get_user_by_email(session, args.email.strip())
            if found is None:
                print(f"error: no admin user {args.email}; create one with create-admin", file=sys.stderr)
                return 1
            actor = service.Actor(found.id, found.email, "cli")
            token, _row = service.create_token(session, user=found, name=args.name, actor=actor)
            print(f"API token for {found.email} (shown once; send it as 'Authorization: Bearer <token>'):")
            print(token)
            return 0
    except (AppError, ValueError) as exc:
        print(f"error: {getattr(exc, 'detail', exc)}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
