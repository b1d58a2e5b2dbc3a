"""The gRPC daemon: `daemon` (process, flags, health, reflection), `servicer` (the RPCs),
authentication, handler registration, metrics, rich error statuses, logs and the server's
memory housekeeping."""
