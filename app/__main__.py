"""`python -m app …` and the `gpu-sizer` console script ([project.scripts] in pyproject.toml): the command line is
app.entry.cli.

Nothing else is imported here at module level. `serve --workers N` starts each worker as a spawned process, and a
spawned process imports the parent's main module (this one, as `__mp_main__`) before it runs anything, so before
the thread that answers uvicorn's health-check pings exists: with the whole CLI imported here, two workers importing
the app at once on a busy 2-core host took over uvicorn's 5 s and were killed and started again (review R7)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from app.entry.cli import main as cli_main  # noqa: PLC0415 (a worker's import of this module stays light: see above)

    return cli_main(argv)


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run()
