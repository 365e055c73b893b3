"""examples/partial_fusion.py: t = 0 is the ensemble, t = 1 of a model with itself is the
model, and the fused shapes and parameter counts are as documented."""

import importlib.util
import pathlib

import numpy as np
import pytest

pytest.importorskip("sklearn")

PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "partial_fusion.py"
spec = importlib.util.spec_from_file_location("partial_fusion", PATH)
fusion = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fusion)


@pytest.fixture(scope="module")
def models():
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = x[:400] / 16.0
    y = y[:400]
    a = fusion.train_mlp(x, y, [16, 12], seed=0, max_iter=60)
    b = fusion.train_mlp(x, y, [16, 12], seed=1, max_iter=60)
    return x, a, b


def test_t0_reproduces_the_ensembles_averaged_logits(models):
    x, a, b = models
    fused = fusion.fuse(a, b, 0.0)
    want = 0.5 * (fusion.forward(a, x) + fusion.forward(b, x))
    np.testing.assert_allclose(fusion.forward(fused, x), want, rtol=1e-12, atol=1e-12)
    # Both models side by side, their output biases merged into one.
    assert fusion.param_count(fused) == fusion.param_count(a) + fusion.param_count(b) - 10


def test_t1_of_a_model_with_itself_is_the_model(models):
    x, a, _ = models
    fused = fusion.fuse(a, a, 1.0)
    assert [w.shape for w, _ in fused] == [w.shape for w, _ in a]
    np.testing.assert_allclose(fusion.forward(fused, x), fusion.forward(a, x), atol=1e-10)


def test_fused_widths_and_parameter_counts(models):
    x, a, b = models
    counts = []
    for t in [0.0, 0.25, 0.5, 1.0]:
        fused = fusion.fuse(a, b, t)
        widths = [2 * h - int(round(t * h)) for h in (16, 12)]
        assert [w.shape for w, _ in fused] == [
            (64, widths[0]),
            (widths[0], widths[1]),
            (widths[1], 10),
        ]
        assert fusion.forward(fused, x).shape == (400, 10)
        counts.append(fusion.param_count(fused))
    # From both models (less the merged output biases) down to one model's count.
    assert counts[0] == fusion.param_count(a) + fusion.param_count(b) - 10
    assert counts[-1] == fusion.param_count(a)
    assert counts == sorted(counts, reverse=True)


def test_matching_prefers_the_closest_neurons():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(20, 5))
    perm = rng.permutation(20)
    b = a[perm] + 0.01 * rng.normal(size=(20, 5))
    b[:10] += 5.0  # the first ten of B are far from everything
    pairs = fusion.match(a, b, 0.5, 0.05)
    assert len(pairs) == 10
    for i, j in pairs:
        assert j >= 10 and perm[j] == i
