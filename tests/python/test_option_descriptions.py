"""The option tables of the API reference (docs/api/options.md) come from the engine's
description of each options struct; these tests hold that description to what the Python
functions accept, so the reference cannot list an option a user cannot pass or a default the
function does not use."""

import inspect

import pytest

import birkhoff
from birkhoff import _birkhoff

FUNCTIONS = {
    "sinkhorn": [birkhoff.sinkhorn, birkhoff.sinkhorn_divergence],
    "sliced": [birkhoff.sliced_wasserstein],
    "gromov": [birkhoff.gromov_wasserstein, birkhoff.fused_gromov_wasserstein],
    "graph_gromov": [birkhoff.graph_gromov_wasserstein],
    "barycenter": [birkhoff.barycenter],
    "fixed_barycenter": [birkhoff.fixed_support_barycenter],
    "nope": [birkhoff.coarsen],
    "qpalign": [birkhoff.align],
}
try:
    import birkhoff.torch as bt

    FUNCTIONS["sinkhorn"] += [bt.sinkhorn, bt.SamplesLoss]
    FUNCTIONS["sliced"].append(bt.sliced_wasserstein)
    FUNCTIONS["gromov"] += [bt.gromov_wasserstein, bt.fused_gromov_wasserstein]
    FUNCTIONS["barycenter"].append(bt.barycenter)
except ImportError:  # birkhoff.torch is optional; the numpy front end is still checked
    pass
# Described options that a Python function takes under another keyword or only in a sibling.
RENAMED = {"mle_rho": "mle_weights", "mle_r": "mle_weights"}


@pytest.mark.parametrize("kind", sorted(FUNCTIONS))
def test_every_described_option_is_a_keyword_with_the_same_default(kind):
    fields = getattr(_birkhoff, f"describe_{kind}_options")()
    assert fields, kind
    signatures = [inspect.signature(f).parameters for f in FUNCTIONS[kind]]
    for field in fields:
        assert field["help"], f"{kind}.{field['name']} has no help text"
        name = RENAMED.get(field["name"], field["name"])
        found = [s[name] for s in signatures if name in s]
        if kind == "sinkhorn" and not found:
            from birkhoff._solver_args import _OPTION_TYPES

            assert name in _OPTION_TYPES, f"{kind}: {name} is not accepted"
            continue
        assert found, f"{kind}: described option {name} is not a keyword of {FUNCTIONS[kind]}"
        for parameter in found:
            default = parameter.default
            if name in RENAMED.values() or default in (None, inspect.Parameter.empty):
                continue
            assert default == field["default"], (kind, name, default, field["default"])


def test_enum_options_list_their_spellings():
    fields = {f["name"]: f for f in _birkhoff.describe_sinkhorn_options()}
    assert fields["backend"]["choices"] == ["auto", "dense", "multiscale"]
    assert fields["backend"]["default"] in fields["backend"]["choices"]
    assert fields["max_iter"]["choices"] == []
