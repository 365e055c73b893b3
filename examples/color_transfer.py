"""Colour transfer between two photos by entropic OT between their pixels
========================================================================

Every pixel of the source and of the target photo is a point of the RGB cube [0, 1]^3; the
entropic plan between the two clouds (``birkhoff.sinkhorn``, uniform weights, streamed: the
n x m cost matrix is never stored) moves each source colour to its barycentric image
``r.barycentric_map()``, which recolours the source with the target's palette
[flashsinkhorn2026]. The photos are scikit-image's samples (Debian's ``python3-skimage``), the
same as ``birkhoff color-transfer``'s; any two PNG files work. Prints the loss, iterations and
time and writes the three panels (source | target | recoloured source).

Run it with::

    python examples/color_transfer.py [--size 128] [--blur 0.02] [SOURCE.png TARGET.png]
"""

from __future__ import annotations

import argparse
import pathlib
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import birkhoff  # noqa: E402

SAMPLES = ["/usr/lib/python3/dist-packages/skimage/data", "/usr/share/scikit-image/data"]


def sample(name):
    for root in SAMPLES:
        path = pathlib.Path(root) / name
        if path.exists():
            return path
    raise SystemExit(f"{name} not found: install Debian's python3-skimage or pass two PNG files")


def load(path, size):
    """RGB in [0, 1] as float32 (h, w, 3), shrunk by block averaging to about `size` px."""
    img = mpimg.imread(path)[..., :3].astype(np.float32)
    if img.max() > 1.0:
        img /= 255.0
    step = max(1, min(img.shape[:2]) // size)
    h, w = (img.shape[0] // step) * step, (img.shape[1] // step) * step
    img = img[:h, :w].reshape(h // step, step, w // step, step, 3).mean(axis=(1, 3))
    return np.ascontiguousarray(img, dtype=np.float32)


def main():
    p = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    p.add_argument("images", nargs="*", help="SOURCE.png TARGET.png (default: the samples)")
    p.add_argument("--size", type=int, default=128, help="short side in pixels")
    p.add_argument("--blur", type=float, default=0.02)
    p.add_argument("--output", default="out/color_transfer.png")
    args = p.parse_args()
    if len(args.images) not in (0, 2):
        p.error("give SOURCE and TARGET, or neither")
    src_path, dst_path = args.images or (sample("astronaut.png"), sample("coffee.png"))
    src, dst = load(src_path, args.size), load(dst_path, args.size)
    x, y = src.reshape(-1, 3), dst.reshape(-1, 3)
    t = time.perf_counter()
    r = birkhoff.sinkhorn(x, y, blur=args.blur)
    recoloured = np.clip(r.barycentric_map(), 0, 1).reshape(src.shape)
    print(
        f"{len(x)} x {len(y)} pixels: loss {r.loss:.5f}, {r.iterations} iterations, "
        f"marginal error {r.marginal_error:.1e}, backend {r.backend}, "
        f"{time.perf_counter() - t:.1f} s"
    )
    fig, axes = plt.subplots(1, 3, figsize=(12, 4))
    for ax, img, title in zip(axes, (src, dst, recoloured), ("source", "target", "recoloured")):
        ax.imshow(img)
        ax.set_title(title)
        ax.axis("off")
    fig.tight_layout()
    pathlib.Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, dpi=90)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
