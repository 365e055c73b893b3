"""float32 points against float64 points on the same problems, side by side in one run, with
GeomLoss's float32 answer where it has one.

Run:  python bench/python/bench_float32.py [--ot-sizes 10000 100000] [--samples-n 5000]
          [--no-geomloss]

Two cases:
* converged OT (the default converge schedule, marginal_tol 1e-3) between U[0,1]^3 and the
  cube shifted by 0.2 at blur 0.01: the dense backend at the first size, the automatic choice
  (multiscale) at the others. There float32's rounding floor exceeds the tolerance, so a
  float32 solve is finished by float64 iterations from its potentials. One independent check
  of each answer: its plan's marginal error read off its own potentials in float64 numpy
  (1000 sampled rows and columns, every pair summed).
* SamplesLoss("sinkhorn", p=2, blur=0.05) forward + backward (GeomLoss's schedule) between
  standard normal clouds in 64-d, PyTorch's default float32: birkhoff float32, birkhoff
  float64 and GeomLoss's tensorized backend in float32. Values and gradients are compared
  with birkhoff float64's.

Prints seconds, the checks, the ratios and the machine's load.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _checks import marginal_error


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def ot_case(n, blur, results):
    import birkhoff

    rng = np.random.default_rng(n)
    x, y = rng.random((n, 3)), rng.random((n, 3)) + 0.2
    backend = "dense" if n <= 10000 else "auto"
    answers = {}
    for dtype in (np.float64, np.float32):
        r, seconds = timed(
            birkhoff.sinkhorn, x.astype(dtype), y.astype(dtype), blur=blur, backend=backend
        )
        error = marginal_error(x, y, r.f, r.g, blur**2, cost_scale=1.0)
        answers[dtype.__name__] = (r, seconds, error)
    ref, ref_seconds, _ = answers["float64"]
    for name, (r, seconds, error) in answers.items():
        stages = ", ".join(f"{level['name']} {level['iterations']}" for level in r.report["levels"])
        print(
            f"| {n} | {r.backend} | {name} | {stages} | {seconds:.2f} | {error:.1e} | "
            f"{abs(r.loss - ref.loss) / abs(ref.loss):.1e} | {ref_seconds / seconds:.2f} | "
            f"{os.getloadavg()[0]:.1f} |",
            flush=True,
        )
    r32, s32, e32 = answers["float32"]
    results.add(
        case="ot",
        n=n,
        backend=r32.backend,
        float32_s=s32,
        float64_s=ref_seconds,
        geomloss_s=None,
        float32_check=e32,
        float64_check=answers["float64"][2],
        float32_working_dtype=r32.report["working_dtype"],
        loss_rel_diff=abs(r32.loss - ref.loss) / abs(ref.loss),
    )


def samples_case(n, d, blur, use_geomloss, results):
    import torch

    import birkhoff.torch as bt

    rng = np.random.default_rng(d)
    x32 = torch.from_numpy(rng.standard_normal((n, d)).astype(np.float32))
    y32 = torch.from_numpy(rng.standard_normal((n, d)).astype(np.float32))

    def forward_backward(loss, x, y):
        x = x.clone().requires_grad_(True)
        start = time.perf_counter()
        value = loss(x, y)
        (grad,) = torch.autograd.grad(value, x)
        return time.perf_counter() - start, float(value.detach()), grad.double()

    methods = {
        "birkhoff float32": (bt.SamplesLoss("sinkhorn", p=2, blur=blur), torch.float32),
        "birkhoff float64": (bt.SamplesLoss("sinkhorn", p=2, blur=blur), torch.float64),
    }
    if use_geomloss:
        import geomloss

        peer = geomloss.SamplesLoss("sinkhorn", p=2, blur=blur, backend="tensorized")
        methods["GeomLoss tensorized float32"] = (peer, torch.float32)
    runs = {
        name: forward_backward(loss, x32.to(dtype), y32.to(dtype))
        for name, (loss, dtype) in methods.items()
    }
    ours, _, _ = runs["birkhoff float32"]
    _, ref_value, ref_grad = runs["birkhoff float64"]
    scale = float(ref_grad.abs().max())
    for name, (seconds, value, grad) in runs.items():
        print(
            f"| {n} x {d} | {name} | {seconds:.2f} | {value:.9g} | "
            f"{abs(value - ref_value) / abs(ref_value):.1e} | "
            f"{float((grad - ref_grad).abs().max()) / scale:.1e} | {seconds / ours:.2f} | "
            f"{os.getloadavg()[0]:.1f} |",
            flush=True,
        )
    peer = runs.get("GeomLoss tensorized float32")
    results.add(
        case="samplesloss",
        n=n,
        d=d,
        float32_s=ours,
        float64_s=runs["birkhoff float64"][0],
        geomloss_s=peer[0] if peer else None,
        value_rel_diff=abs(runs["birkhoff float32"][1] - ref_value) / abs(ref_value),
        geomloss_value_rel_diff=abs(peer[1] - ref_value) / abs(ref_value) if peer else None,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ot-sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--blur", type=float, default=0.01)
    parser.add_argument("--samples-n", type=int, default=5000)
    parser.add_argument("--samples-d", type=int, default=64)
    parser.add_argument("--samples-blur", type=float, default=0.05)
    parser.add_argument("--no-geomloss", action="store_true")
    parser.add_argument("--results", help="JSON output (default bench/results/float32.json)")
    args = parser.parse_args()
    from _results import Results

    results = Results(
        "float32",
        "float32 points against float64 points (converged OT; SamplesLoss in 64-d with GeomLoss)",
        x="n",
        x_label="points per cloud n = m",
        times={"float32": "float32_s", "float64": "float64_s", "GeomLoss": "geomloss_s"},
        group=["case"],
    )
    print(f"load average at start: {os.getloadavg()}")
    print(
        "| n = m | backend | points | stages (iterations) | seconds | marginal error (check) "
        "| loss vs float64 | float64 / this | load |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in args.ot_sizes:
        ot_case(n, args.blur, results)
    print()
    print(
        "| n x d | method | seconds | value | value vs float64 | gradient vs float64 | "
        "time / birkhoff float32 | load |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    samples_case(args.samples_n, args.samples_d, args.samples_blur, not args.no_geomloss, results)
    print(f"load average at end: {os.getloadavg()}")
    results.save(args.results)


if __name__ == "__main__":
    main()
