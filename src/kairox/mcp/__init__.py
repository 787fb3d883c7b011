"""The MCP server surface: memory list/search/propose and workspace search, over the facade."""
