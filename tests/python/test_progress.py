"""progress=True without tqdm: a bar on a terminal, whole lines in a log."""

import io
import sys

from birkhoff._arrays import progress_callback


class _Log(io.StringIO):
    def isatty(self):
        return False


def test_a_log_gets_whole_lines_at_most_one_per_tenth(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails: the built-in bar
    log = _Log()
    monkeypatch.setattr(sys, "stderr", log)
    report = progress_callback(True)
    for done in range(0, 1001):
        report("sinkhorn", done, 1000)
    lines = log.getvalue().split("\n")
    assert lines[-1] == "" and "\r" not in log.getvalue()
    assert lines[0] == "sinkhorn 0/1000" and lines[-2] == "sinkhorn 1000/1000"
    assert 10 <= len(lines) - 1 <= 12
