"""The MCP server (Model Context Protocol, the official SDK): the JSON API's estimate, recommend and quote
services as tools an AI assistant can call, over streamable HTTP at POST /mcp (app.mcp.http, an API key with
the tool's scope) and over stdio (`gpu-sizer mcp`, app.mcp.stdio). A delivery layer, a peer of app.api: the
tools (app.mcp.tools) call the same services with the same request models."""
