"""The server side: the registry users decorate, dispatch, dialects and the Context."""
