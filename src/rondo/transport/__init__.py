"""Transports: thin adapters between bytes and the transport-free core."""
