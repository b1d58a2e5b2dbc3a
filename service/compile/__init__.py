"""How a compile runs: `engine` (memory -> store -> lease -> compile, the one sequence the
server and the CLI share), the isolated worker processes and their pool, the single-flight
scheduler, killable tileiras runs, faults that are no verdict on the kernel, and locating
the toolchain."""
