"""cutile-serve's service layer, by job: `cache/` (request keys and the artifact stores),
`compile/` (the engine that runs memory -> store -> lease -> compile, worker processes,
single flight, tileiras runs), `server/` (the gRPC daemon and its RPCs) and `cli/`
(`cutile-compile`, `cutile-lsp`, the console scripts); `convert` maps protos to and from
the compiler's domain types for all of them. It imports the parser only through
`parser.front_end` and compiles through `lowering.pipeline.compile_kernel`.

The server starts tileiras from worker threads. gRPC's fork handlers run in every child
created with fork() (subprocess uses fork() whenever `preexec_fn` is given), and such
children were seen to die with SIGSEGV (about 1 in 70 assemblies). The handlers only
matter for processes that use gRPC after fork(), which tileiras never does, so they are
off unless the user chose otherwise. This must happen before `grpc` is first imported.
"""

import os

os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
