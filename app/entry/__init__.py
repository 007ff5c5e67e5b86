"""Entry points: the command line (`cli`, which `python -m app` hands over to), the ASGI application (`main`),
the container's health check (`healthcheck`), the seed (`seed`) and every table's metadata for Alembic (`models`).

Nothing in the app imports this package except `app.__main__`; it imports everything below it.
"""
