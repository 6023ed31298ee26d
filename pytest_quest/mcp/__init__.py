"""The MCP server (``pytest-quest-mcp``): an entry point above app, never imported by the layers below."""
