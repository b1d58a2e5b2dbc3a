"""service.cli.progress: a bar with an ETA on a terminal, one line per kernel elsewhere."""

from __future__ import annotations

import io

from service.cli.progress import Progress


def test_one_line_per_kernel_when_not_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress(2, stream)
    progress.finished("add<B=128> (sm_90)", True, 212.4)
    progress.write("warning: something")
    progress.set_total(3)  # variants joined the batch
    progress.finished("add<B=128> divisible by 16 (sm_90)", False, 80)
    progress.finished("sub (sm_80)", True, 5)
    progress.close()
    assert stream.getvalue().splitlines() == [
        "[1/2] compiled add<B=128> (sm_90) 212 ms",
        "warning: something",
        "[2/3] failed add<B=128> divisible by 16 (sm_90) 80 ms",
        "[3/3] compiled sub (sm_80) 5 ms",
    ]


def test_a_bar_with_eta_on_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress(4, stream, terminal=True)
    progress.finished("add<B=128> (sm_90)", True, 212)
    progress.write("error[E0596]: cannot borrow")
    progress.finished("sub (sm_90)", True, 100)
    progress.close()
    text = stream.getvalue()
    assert "2/4 [" in text and "<" in text  # done/total [elapsed<remaining]
    assert "compiled sub (sm_90)" in text
    assert "error[E0596]: cannot borrow\n" in text
    assert "[1/4]" not in text
