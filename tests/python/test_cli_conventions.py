"""Conventions of the `birkhoff` command: argument errors, graph-input reports, JSON, peak RSS.

Argument-parsing errors look like every other error (`birkhoff: error: ...` on stderr, exit
code 2); a bare `birkhoff` prints the subcommand list and exits 0. coarsen and align report what
the graph builder did with the edge list (self-loops, merged repeats, one-way and two-way pairs,
nodes that only the ids gave) and warn, naming --directed, about an undirected read of an edge
list that mixes both orientations.
"""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

CLI = shutil.which("birkhoff")
pytestmark = pytest.mark.skipif(CLI is None, reason="the birkhoff command is not on PATH")

# Each subcommand with its positional arguments (not read: parsing fails before).
POSITIONALS = {
    "transport": ["x.npy", "y.npy"],
    "color-transfer": [],
    "coarsen": ["g"],
    "align": ["g1", "g2"],
    "generate": ["wigner", "out"],
}
SUBCOMMANDS = list(POSITIONALS)


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


def assert_parse_error(out, *needles):
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert out.stderr.startswith("birkhoff: error: "), out.stderr
    assert out.stdout == ""
    for needle in needles:
        assert needle in out.stderr, (needle, out.stderr)


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_unknown_option_is_an_error_with_exit_code_2(sub):
    out = run(sub, *POSITIONALS[sub], "--no-such-option")
    assert_parse_error(out, "--no-such-option", f"birkhoff {sub} --help")


@pytest.mark.parametrize(
    "args",
    [
        ["transport"],  # SOURCE and TARGET missing
        ["coarsen"],
        ["align", "only_g1"],
        ["generate", "wigner"],
    ],
)
def test_missing_positional_is_an_error_with_exit_code_2(args):
    assert_parse_error(run(*args))


@pytest.mark.parametrize(
    "args, flag",
    [
        (["coarsen", "g", "--ratio", "half"], "--ratio"),
        (["align", "g1", "g2", "--max-iter", "many"], "--max-iter"),
        (["generate", "wigner", "out", "--n", "1.5x"], "--n"),
        (["transport", "x.npy", "y.npy", "--blur"], "--blur"),  # value missing
    ],
)
def test_bad_or_missing_value_is_an_error_with_exit_code_2(args, flag):
    assert_parse_error(run(*args), flag)


def test_unexpected_arguments_are_listed_in_the_order_given():
    out = run("coarsen", "g", "first", "second", "third")
    assert_parse_error(out, "unexpected arguments: first second third")
    out = run("generate", "wigner", "out", "surplus")
    assert_parse_error(out, "unexpected argument: surplus")


def test_unknown_subcommand_is_an_error_with_exit_code_2():
    out = run("frobnicate")
    assert_parse_error(out, "unknown subcommand: frobnicate (subcommands: transport")
    assert_parse_error(run("--frobnicate"), "unknown option: --frobnicate")


def test_bare_command_lists_the_subcommands_and_exits_0():
    out = run()
    assert out.returncode == 0, out.stderr
    for sub in SUBCOMMANDS:
        assert sub in out.stdout
    assert out.stdout == run("--help").stdout


@pytest.mark.parametrize("sub", [None, *SUBCOMMANDS])
def test_help_exits_0_and_usage_names_the_command_not_its_path(sub):
    args = ["--help"] if sub is None else [sub, "--help"]
    out = run(*args)
    assert out.returncode == 0, out.stderr
    usage = next(line for line in out.stdout.splitlines() if line.startswith("Usage:"))
    want = "Usage: birkhoff" if sub is None else f"Usage: birkhoff {sub}"
    assert usage.startswith(want), usage
    assert CLI not in out.stdout


def test_version_exits_0():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.startswith("birkhoff ")


# A graph on 6 nodes whose edge list has everything a builder must report: self-loops (3 columns,
# node 4 twice), {0, 1} in both orientations, {1, 2} one way, {2, 3} one way and listed twice;
# node 5 is isolated.
MESSY_EDGES = np.array([[0, 1, 1, 2, 2, 3, 4, 4], [1, 0, 2, 3, 3, 3, 4, 4]])


def save_folder(path, **arrays):
    path.mkdir(parents=True, exist_ok=True)
    for name, a in arrays.items():
        np.save(path / f"{name}.npy", a)
    return path


def features(rng, n=6, d=3):
    return rng.standard_normal((n, d)).astype(np.float32)


def test_coarsen_reports_self_loops_repeats_and_orientation(tmp_path, rng):
    folder = save_folder(tmp_path / "g", features=features(rng), edge_index=MESSY_EDGES)
    out = run("coarsen", folder, "--ratio", "0.5", "--json")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["input"] == {
        "nodes": 6,
        "nodes_from_ids": 0,
        "self_loops_dropped": 3,
        "duplicates_merged": 2,  # (1, 0) repeats (0, 1); the second (2, 3)
        "one_way_pairs": 2,
        "two_way_pairs": 1,
        "directed": False,
    }
    assert (summary["self_loops_dropped"], summary["duplicates_merged"]) == (3, 2)
    assert summary["edges_before"] == 3
    [warning] = [w for w in summary["warnings"] if "not symmetric" in w]
    assert "--directed" in warning and "2 node pairs" in warning
    assert "birkhoff: warning: edge_index is not symmetric" in out.stderr
    text = run("coarsen", folder, "--ratio", "0.5", "--quiet")
    assert text.returncode == 0, text.stderr
    assert "3 self-loops dropped, 2 duplicate or reversed edges merged" in text.stdout
    assert "--directed" in text.stderr


@pytest.mark.parametrize("layout", ["both", "upper", "lower"])
def test_coarsen_does_not_warn_about_undirected_encodings(tmp_path, rng, layout):
    upper = np.array([[0, 1, 2, 0], [1, 2, 3, 3]])
    e = {"both": np.hstack([upper, upper[::-1]]), "upper": upper, "lower": upper[::-1]}[layout]
    folder = save_folder(tmp_path / "g", features=features(rng, n=4), edge_index=e)
    out = run("coarsen", folder, "--ratio", "0.5", "--json")
    summary = json.loads(out.stdout)
    assert summary["warnings"] == [] and "warning" not in out.stderr
    want = (0, 4) if layout == "both" else (4, 0)  # (one way, both ways)
    assert (summary["input"]["one_way_pairs"], summary["input"]["two_way_pairs"]) == want


def align_json(g1, g2, *flags):
    out = run("align", g1, g2, "--json", "--quiet", "--max-iter", "5", *flags)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), out.stderr


def test_align_uses_self_loops_and_reports_the_input(tmp_path, rng):
    x = features(rng)
    g = save_folder(tmp_path / "g", features=x, edge_index=MESSY_EDGES)
    summary, stderr = align_json(g, g)
    for key in ("graph1", "graph2"):
        assert summary[key] == {
            "nodes": 6,
            "nodes_from_ids": 0,
            "self_loops_used": 3,
            "duplicates_merged": 2,
            "one_way_pairs": 2,
            "two_way_pairs": 1,
            "directed": False,
        }
    assert len(summary["warnings"]) == 2
    assert all("--directed" in w for w in summary["warnings"])
    assert "edge_index1 is not symmetric" in stderr and "edge_index2 is not symmetric" in stderr
    # Read as directed, the orientations are the graph's: (1, 0) is no repeat, nothing to warn.
    summary, stderr = align_json(g, g, "--directed")
    assert summary["graph1"]["duplicates_merged"] == 1
    assert summary["graph1"]["directed"] is True
    assert summary["graph1"]["one_way_pairs"] == 0 and summary["warnings"] == []
    assert "warning" not in stderr


def test_align_counts_the_nodes_that_only_the_ids_give(tmp_path):
    e = np.array([[0, 1, 2], [1, 2, 6]])  # ids up to 6: N = 7, nodes 3, 4, 5 isolated
    g = save_folder(tmp_path / "g", edge_index=e)
    summary, _ = align_json(g, g)
    assert summary["n1"] == 7
    assert summary["graph1"]["nodes"] == 7 and summary["graph1"]["nodes_from_ids"] == 7
    text = run("align", g, g, "--quiet", "--max-iter", "5")
    assert "G1: 7 nodes (7 from ids alone)" in text.stdout


def test_generate_prints_json(tmp_path):
    out = run("generate", "er", tmp_path / "pair", "--n", "30", "--d", "4", "--seed", "3", "--json")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert (summary["model"], summary["n"], summary["d"], summary["seed"]) == ("er", 30, 4, 3)
    assert summary["p"] == 0.5 and summary["peak_rss_mb"] > 0
    assert np.load(tmp_path / "pair" / "perm.npy").shape == (30,)
    assert sorted(summary["files"]) == ["g1", "g2", "perm.npy", "truth.npy"]


PARENT = """
import json, subprocess, sys
import numpy as np
ballast = np.ones(500 * 10**6 // 8)  # 500 MB, every page written
out = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True)
print(json.loads(out.stdout)["peak_rss_mb"], float(ballast[-1]))
"""


def test_peak_rss_is_the_command_own_not_its_parent(tmp_path):
    args = [CLI, "generate", "wigner", tmp_path / "pair", "--n", "50", "--json"]
    out = subprocess.run(
        [sys.executable, "-c", PARENT, *map(str, args)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    peak = float(out.stdout.split()[0])
    assert 0 < peak < 200, peak


def test_older_flag_spellings_still_give_the_same_options(tmp_path, rng):
    # Flags are the Python keywords with dashes; the spellings of earlier releases stay
    # accepted (CHANGELOG lists them).
    g = save_folder(tmp_path / "g", features=features(rng), edge_index=MESSY_EDGES)
    new, _ = align_json(g, g, "--sinkhorn-sweeps", "7", "--num-threads", "1")
    old, _ = align_json(g, g, "--sweeps", "7", "--threads", "1")
    assert new["options"]["sinkhorn_sweeps"] == old["options"]["sinkhorn_sweeps"] == 7
    assert new["options"]["num_threads"] == old["options"]["num_threads"] == 1
