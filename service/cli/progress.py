"""`cutile-compile`'s progress on stderr: a bar with an ETA on a terminal, one line per
kernel otherwise.

On a terminal, `Progress` draws a tqdm bar (kernels done of the total, rate and time left)
whose postfix names the kernel that finished last; diagnostics and notes are written above
the bar (`write`) so it is never torn. Elsewhere (a CI log, a pipe) each kernel prints one
line as it finishes: `[3/12] compiled add<B=128> (sm_90) 212 ms` (or `failed`).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]{postfix}"


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, terminal: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        if terminal is None:
            terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = total
        self.done = 0
        self._bar: Any = None
        if terminal:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                unit="kernel",
                file=self.stream,
                dynamic_ncols=True,
                bar_format=BAR_FORMAT,
            )

    def set_total(self, total: int) -> None:
        """The batch grew (automatic variants are known once their kernels compiled)."""
        self.total = max(total, self.done)
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    def finished(self, what: str, ok: bool, ms: float) -> None:
        """One kernel finished: `what` is its label (`add<B=128> (sm_90)`)."""
        self.done += 1
        self.total = max(self.total, self.done)
        verb = "compiled" if ok else "failed"
        if self._bar is not None:
            self._bar.set_postfix_str(f"{verb} {what}", refresh=False)
            self._bar.update(1)
        else:
            line = f"[{self.done}/{self.total}] {verb} {what} {ms:.0f} ms"
            print(line, file=self.stream, flush=True)

    def write(self, text: str) -> None:
        """`text` on the stream, above the bar."""
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
