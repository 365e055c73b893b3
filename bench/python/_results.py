"""The record of a benchmark run: bench/results/NAME.json, which the docs site plots.

Each file says when and where it was measured (date, CPU, cores, memory, versions, the
command) and holds one row per measurement with the machine's load average at that moment;
``x``, ``group`` and ``times`` tell the plot which columns are the size, the series and the
seconds of each method (the first method is ours, the others are the peers).
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import platform
import sys

RESULTS = pathlib.Path(__file__).resolve().parents[1] / "results"


def _cpu():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb():
    try:
        for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _without_results(args):
    """The arguments less --results PATH (where this run wrote its file is not the command)."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--results":
            skip = True
        elif not a.startswith("--results="):
            out.append(a)
    return out


class Results:
    """Rows of one benchmark, written to bench/results/NAME.json by ``save``."""

    def __init__(self, name, title, x, times, group=(), x_label=None, versions=None):
        import birkhoff

        self.data = {
            "benchmark": name,
            "title": title,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": {"cpu": _cpu(), "cores": os.cpu_count(), "memory_gb": _memory_gb()},
            "versions": {"birkhoff": birkhoff.__version__, **(versions or {})},
            "command": "python3 bench/python/"
            + " ".join([pathlib.Path(sys.argv[0]).name, *_without_results(sys.argv[1:])]),
            "x": x,
            "x_label": x_label or x,
            "group": list(group),
            "times": dict(times),
            "rows": [],
        }

    def add(self, **row):
        """One measurement; the load average is added to it."""
        row["load"] = round(os.getloadavg()[0], 2)
        self.data["rows"].append(row)

    def save(self, path=None):
        """Writes the JSON file (bench/results/NAME.json unless ``path``) and says where."""
        path = pathlib.Path(path) if path else RESULTS / f"{self.data['benchmark']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.data, indent=1) + "\n")
        print(f"wrote {path}")
