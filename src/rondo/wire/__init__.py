"""JSON-RPC messages, MCP error codes, eras and `_meta` keys: what travels, not who handles it."""
