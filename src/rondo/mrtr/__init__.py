"""Multi Round-Trip Requests: the input_required outcome, its admission, and `ctx.ask`."""
