"""The kit the delivery packages (api, web, admin, http, mcp) share: error pages in the client's language
(`error_pages`), a request's session and settings (`deps`), request bodies read off the event loop (`bodies`).

The domain below never imports it; its own order is a contract in pyproject.toml.
"""
