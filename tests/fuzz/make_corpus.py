"""Writes the seed inputs of the fuzz targets into tests/fuzz/corpus/<target>/.

Seeds are small valid files of each kind the readers accept (numpy's own .npy and .npz
output, PNGs of every colour type), from which libFuzzer starts mutating. Run it with numpy
installed: python3 tests/fuzz/make_corpus.py
"""

import io
import pathlib
import struct
import zlib

import numpy as np

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus"


def npy_bytes(a, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, a)
    else:
        np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()


def npy_seeds():
    rng = np.random.default_rng(0)
    seeds = {
        "f32_c": rng.random((3, 4), dtype=np.float32),
        "f64_fortran": np.asfortranarray(rng.random((3, 4))),
        "f32_fortran_3d": np.asfortranarray(rng.random((2, 3, 2), dtype=np.float32)),
        "f64_big_endian": rng.random(5).astype(">f8"),
        "i32_fortran_edges": np.asfortranarray(np.array([[0, 1, 2], [1, 2, 0]], np.int32)),
        "i64_big_endian_fortran": np.asfortranarray(np.arange(6, dtype=">i8").reshape(2, 3)),
        "u16": np.array([0, 1, 65535], np.uint16),
        "u64": np.array([0, 2**63], np.uint64),
        "i8": np.array([-128, 0, 127], np.int8),
        "i16_big": np.array([-3, 300], ">i2"),
        "u32": np.array([1, 4294967295], np.uint32),
        "u8": np.array([[1, 2], [3, 4]], np.uint8),
        "bool": np.array([True, False, True]),
        "empty_2x0": np.zeros((2, 0), np.int64),
        "empty_0": np.zeros((0,), np.float32),
        "scalar": np.array(3.5),
    }
    out = {name: npy_bytes(a) for name, a in seeds.items()}
    out["v2_header"] = npy_bytes(np.arange(4, dtype=np.int64), version=(2, 0))
    out["v3_header"] = npy_bytes(np.arange(4, dtype=np.float32), version=(3, 0))
    return out


def npz_seeds():
    out = {}
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    e = np.asfortranarray(np.array([[0, 1], [1, 0]], np.int32))
    for name, save in [("stored", np.savez), ("deflated", np.savez_compressed)]:
        buf = io.BytesIO()
        save(buf, x=x, edge_index=e, empty=np.zeros((2, 0)))
        out[name] = buf.getvalue()
    buf = io.BytesIO()
    np.savez(buf)
    out["no_members"] = buf.getvalue()
    return out


def png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png_bytes(width, height, bit_depth, color_type, rows, palette=None, trns=None, text=None):
    """A PNG with filter type 0 on every row; `rows` holds the packed scanlines."""
    raw = b"".join(b"\x00" + row for row in rows)
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    chunks = [png_chunk(b"IHDR", ihdr)]
    if text is not None:
        chunks.append(png_chunk(b"tEXt", text))
    if palette is not None:
        chunks.append(png_chunk(b"PLTE", palette))
    if trns is not None:
        chunks.append(png_chunk(b"tRNS", trns))
    chunks.append(png_chunk(b"IDAT", zlib.compress(raw, 9)))
    chunks.append(png_chunk(b"IEND", b""))
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def png_seeds():
    rng = np.random.default_rng(1)

    def rows(width, height, bytes_per_pixel):
        data = rng.integers(0, 256, size=(height, width * bytes_per_pixel), dtype=np.uint8)
        return [r.tobytes() for r in data]

    return {
        "rgb8": png_bytes(4, 3, 8, 2, rows(4, 3, 3), text=b"Comment\x00seed"),
        "rgba8": png_bytes(3, 3, 8, 6, rows(3, 3, 4)),
        "gray8": png_bytes(5, 2, 8, 0, rows(5, 2, 1)),
        "gray1": png_bytes(9, 2, 1, 0, [b"\xa5\x80", b"\x0f\x00"]),
        "gray_alpha16": png_bytes(2, 2, 16, 4, rows(2, 2, 4)),
        "rgb16": png_bytes(2, 2, 16, 2, rows(2, 2, 6)),
        "palette4": png_bytes(
            4, 2, 4, 3, [b"\x01\x23", b"\x32\x10"], palette=bytes(range(12)), trns=b"\x00\xff"
        ),
    }


def graph_container(files, options):
    """The graph_dir target's input: a flag byte, then each file as length + bytes."""
    names = ["features", "edge_index", "edge_weight", "adjacency", "labels"]
    flags = options
    body = b""
    for bit, name in enumerate(names):
        if name in files:
            flags |= 1 << bit
            body += struct.pack("<I", len(files[name])) + files[name]
    return bytes([flags]) + body


def graph_dir_seeds():
    x = np.ones((3, 2), np.float32)
    e = np.array([[0, 1], [1, 2]], np.int64)
    edges, dense, labels = 32, 64, 128
    return {
        "features_edges": graph_container(
            {"features": npy_bytes(x), "edge_index": npy_bytes(e)}, edges
        ),
        "int32_fortran_weights": graph_container(
            {
                "features": npy_bytes(x.astype(np.float64)),
                "edge_index": npy_bytes(np.asfortranarray(e.astype(np.int32))),
                "edge_weight": npy_bytes(np.array([1.0, 2.0], np.float32)),
            },
            edges,
        ),
        "edgeless_labels": graph_container(
            {
                "features": npy_bytes(x),
                "edge_index": npy_bytes(np.zeros((2, 0), np.uint16)),
                "labels": npy_bytes(np.array([0, 1, 0], np.int32)),
            },
            edges | labels,
        ),
        "adjacency": graph_container(
            {"features": npy_bytes(x), "adjacency": npy_bytes(np.eye(3, dtype=">f8"))},
            edges | dense,
        ),
    }


def main():
    for target, seeds in [
        ("npy", npy_seeds()),
        ("npz", npz_seeds()),
        ("png", png_seeds()),
        ("graph_dir", graph_dir_seeds()),
    ]:
        folder = CORPUS / target
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in seeds.items():
            (folder / f"seed_{name}").write_bytes(data)


if __name__ == "__main__":
    main()
