"""A server author's tools around a server file: `rondo inspect` (what it offers, without a
transport) and `rondo install` (an entry for it in an MCP host's configuration)."""
