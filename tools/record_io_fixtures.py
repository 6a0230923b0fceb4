#!/usr/bin/env python3
"""Writes the npy and safetensors fixtures of tests/io_test.cpp.

The files are made by the reference writers (numpy's np.save, the
safetensors package, and MLX where installed), and expected.txt records what
each holds, so the C++ tests run without Python:

    <file> <key or -> <dtype> <shape: d0,d1,... or - for 0-d> <C-order bytes, hex, little-endian, or ->

Run from the repository root: python3 tools/record_io_fixtures.py
The package versions used are written to tests/fixtures/io/README.md.
"""
import os
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "io")

# nuvec dtype name -> numpy dtype (bfloat16 is handled as raw uint16 bits).
NUMPY_DTYPES = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "uint16": np.uint16,
    "int16": np.int16, "uint32": np.uint32, "int32": np.int32, "uint64": np.uint64,
    "int64": np.int64, "float16": np.float16, "float32": np.float32,
    "float64": np.float64, "complex64": np.complex64,
}


def values(name, shape):
    """Deterministic values covering each dtype's range and special values."""
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.uint64)
    if name == "bool":
        v = (i % 3 == 0)
    elif name in ("uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"):
        bits = np.dtype(NUMPY_DTYPES[name]).itemsize * 8
        with np.errstate(over="ignore"):
            h = i * np.uint64(0x9E3779B97F4A7C15) + np.uint64(12345)
        h = h >> np.uint64(64 - bits) if bits < 64 else h
        v = h.astype(np.dtype(f"u{bits // 8}")).view(NUMPY_DTYPES[name])
        info = np.iinfo(NUMPY_DTYPES[name])
        v[:2] = [info.min, info.max][: min(2, n)]
    elif name in ("float16", "float32", "float64", "bfloat16"):
        f = (i.astype(np.float64) * 0.25 - 2.5)
        specials = [np.nan, np.inf, -np.inf, -0.0, 1e-40 if name != "float16" else 6e-8]
        f[: min(n, len(specials))] = specials[: min(n, len(specials))]
        if name == "bfloat16":  # the upper half of float32's bits
            v = (f.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        else:
            v = f.astype(NUMPY_DTYPES[name])
    elif name == "complex64":
        f = i.astype(np.float32) * np.float32(0.5) - np.float32(3)
        v = (f + 1j * (np.float32(1) - 2 * f)).astype(np.complex64)
    else:
        raise ValueError(name)
    return v.reshape(shape)


expected = []


def record(file, key, name, arr):
    shape = ",".join(str(d) for d in arr.shape) or "-"
    raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
    expected.append(f"{file} {key} {name} {shape} {raw.hex() or '-'}")


def write_numpy():
    shape = (2, 3, 4)
    for name, dt in NUMPY_DTYPES.items():
        v = values(name, shape)
        np.save(os.path.join(OUT, f"np_{name}_c.npy"), v)
        record(f"np_{name}_c.npy", "-", name, v)
        np.save(os.path.join(OUT, f"np_{name}_f.npy"), np.asfortranarray(v))
        record(f"np_{name}_f.npy", "-", name, v)
    for code, name in [(">u2", "uint16"), (">i4", "int32"), (">i8", "int64"),
                       (">f2", "float16"), (">f4", "float32"), (">f8", "float64"),
                       (">c8", "complex64")]:
        v = values(name, (2, 3))
        np.save(os.path.join(OUT, f"np_be_{name}.npy"), v.astype(code))
        record(f"np_be_{name}.npy", "-", name, v)
    v = values("float64", (3, 2, 2))
    np.save(os.path.join(OUT, "np_be_float64_f.npy"), np.asfortranarray(v.astype(">f8")))
    record("np_be_float64_f.npy", "-", "float64", v)
    v = np.array(1.5, np.float32)
    np.save(os.path.join(OUT, "np_scalar.npy"), v)
    record("np_scalar.npy", "-", "float32", v)
    v = np.zeros((0, 3), np.int32)
    np.save(os.path.join(OUT, "np_empty.npy"), v)
    record("np_empty.npy", "-", "int32", v)
    # numpy has no bfloat16: 2-byte void values ('|V2') carry its bits.
    v = values("bfloat16", (5,))
    np.save(os.path.join(OUT, "np_void_bf16.npy"), v.view("V2"))
    record("np_void_bf16.npy", "-", "bfloat16", v)


def write_safetensors():
    import safetensors
    import safetensors.numpy as stnp
    from safetensors import TensorSpec, serialize_file

    tensors = {f"t_{name}": values(name, (3, 5)) for name in NUMPY_DTYPES}
    tensors["scalar"] = np.array(-7, np.int64)
    tensors["empty"] = np.zeros((0, 3), np.float32)
    tensors["layers.0.wéight"] = values("float32", (2, 2))
    stnp.save_file(tensors, os.path.join(OUT, "st_numpy.safetensors"),
                   metadata={"format": "np", "note": "ünïcode \"quoted\" \\ ✓"})
    for k, v in tensors.items():
        name = "bool" if v.dtype == np.bool_ else str(v.dtype)
        record("st_numpy.safetensors", k, name, v)
    # BF16 through the package's TensorSpec, the path safetensors.torch takes.
    v = values("bfloat16", (4, 3))
    buf = np.ascontiguousarray(v)
    serialize_file({"w": TensorSpec(dtype="bfloat16", shape=v.shape,
                                    data_ptr=buf.ctypes.data, data_len=buf.nbytes)},
                   os.path.join(OUT, "st_bf16.safetensors"), None)
    record("st_bf16.safetensors", "w", "bfloat16", v)
    return f"safetensors {safetensors.__version__}"


def write_mlx():
    try:
        import mlx.core as mx
    except ImportError:
        return None
    v = values("bfloat16", (2, 3))
    a = mx.array(v).view(mx.bfloat16)
    mx.save(os.path.join(OUT, "mlx_bf16.npy"), a)
    record("mlx_bf16.npy", "-", "bfloat16", v)
    # MLX pads npy headers to 16 bytes only, so float32 data is misaligned.
    v = values("float32", (2, 3))
    mx.save(os.path.join(OUT, "mlx_f32.npy"), mx.array(v))
    record("mlx_f32.npy", "-", "float32", v)
    mx.save(os.path.join(OUT, "mlx_f32_t.npy"), mx.array(v).T)
    record("mlx_f32_t.npy", "-", "float32", v.T)
    arrays = {}
    for name in list(NUMPY_DTYPES) + ["bfloat16"]:
        v = values(name, (3,))
        arrays[f"m_{name}"] = v
    # MLX's save_safetensors refuses float64.
    del arrays["m_float64"]
    mx_arrays = {k: (mx.array(v).view(mx.bfloat16) if k == "m_bfloat16" else mx.array(v))
                 for k, v in arrays.items()}
    mx.save_safetensors(os.path.join(OUT, "mlx.safetensors"), mx_arrays,
                        metadata={"made_by": "mlx"})
    for k, v in arrays.items():
        name = k[2:]
        record("mlx.safetensors", k, name, v)
    return f"mlx {mx.__version__}"


def main():
    os.makedirs(OUT, exist_ok=True)
    write_numpy()
    versions = [f"python {sys.version.split()[0]}", f"numpy {np.__version__}",
                write_safetensors()]
    mlx = write_mlx()
    if mlx:
        versions.append(mlx)
    with open(os.path.join(OUT, "expected.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(expected) + "\n")
    with open(os.path.join(OUT, "README.md"), "w", encoding="utf-8") as f:
        f.write("# I/O fixtures\n\nWritten by `tools/record_io_fixtures.py` with "
                + ", ".join(versions) + ".\n`expected.txt` lists what each file holds "
                "(file, key, dtype, shape, C-order little-endian bytes in hex); "
                "`tests/io_test.cpp` checks every line.\n"
                "torch was not installable here (no network to its index); the "
                "`bfloat16` tensor of `st_bf16.safetensors` is written through the "
                "same `safetensors.serialize_file` call that `safetensors.torch` makes.\n")


if __name__ == "__main__":
    main()
