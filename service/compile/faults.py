"""`CompileFault`: a compile that ended without an answer about the kernel.

Raised by the engine (and its worker pool) for what is not the kernel's doing, so the server
never reports it as a compile diagnostic the client would not retry. `kind` says whose it
is, and the server answers accordingly (`service.server.servicer`):

- "costly": the request's own input needed more CPU time or memory than a compile may use,
  the front end's or tileiras's (past its wall-clock timeout or CPU time): answered as the
  request's error, a diagnostic, which a client does not retry;
- "tileiras": tileiras was killed, crashed, could not start or wrote no valid cubin
  (UNAVAILABLE: retrying later or on another replica may succeed);
- "crashed": a compile worker died (INTERNAL);
- "cancelled": every caller left, or their deadlines passed, so the run was killed;
- "unavailable": the server is stopping.
"""

from __future__ import annotations


class CompileFault(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
