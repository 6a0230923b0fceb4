#!/usr/bin/env python3
"""Checks that files nuvec writes load in numpy, safetensors and MLX.

Runs the test binary's IoFixtures.WriteFilesForInterop, which loads every
fixture of tests/fixtures/io and saves it again with save_npy and
save_safetensors, then loads those files with each Python package that is
installed and compares dtype, shape and bytes with the recorded values.
Never part of the build or the C++ tests.

    python3 tools/io_interop.py [build/io/tests/nuvec_tests]
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

# nuvec dtype name -> (numpy dtype, safetensors name)
DTYPES = {
    "bool": (np.bool_, "BOOL"), "uint8": (np.uint8, "U8"), "int8": (np.int8, "I8"),
    "uint16": (np.uint16, "U16"), "int16": (np.int16, "I16"), "uint32": (np.uint32, "U32"),
    "int32": (np.int32, "I32"), "uint64": (np.uint64, "U64"), "int64": (np.int64, "I64"),
    "float16": (np.float16, "F16"), "bfloat16": (None, "BF16"), "float32": (np.float32, "F32"),
    "float64": (np.float64, "F64"), "complex64": (np.complex64, "C64"),
}


def parse_expected(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            file, key, dtype, shape, hexdata = line.split()
            shape = () if shape == "-" else tuple(int(d) for d in shape.split(","))
            rows.append((file, key, dtype, shape, b"" if hexdata == "-" else bytes.fromhex(hexdata)))
    return rows


def as_bytes(arr, dtype):
    """C-order little-endian bytes; bfloat16 arrives as 2-byte void or uint16."""
    arr = np.ascontiguousarray(arr)
    if dtype == "bfloat16":
        return arr.view(np.uint16).astype("<u2").tobytes()
    return arr.astype(arr.dtype.newbyteorder("<")).tobytes()


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/io/tests/nuvec_tests"
    failures, checks, skipped = [], 0, set()
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, NUVEC_IO_INTEROP_DIR=out)
        subprocess.run([binary, "--gtest_filter=IoFixtures.WriteFilesForInterop"], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        rows = parse_expected(os.path.join(out, "expected.txt"))

        def check(who, file, key, got_dtype, got_shape, got_bytes, dtype, shape, data):
            nonlocal checks
            checks += 1
            if got_dtype != dtype or tuple(got_shape) != shape or got_bytes != data:
                failures.append(f"{who}: {file} {key}: got {got_dtype} {tuple(got_shape)}, "
                                f"want {dtype} {shape}" + ("" if got_bytes == data else " (bytes differ)"))

        # numpy reads our npy files (bfloat16 as '<V2', 2-byte void values).
        for file, key, dtype, shape, data in rows:
            if not file.endswith(".npy"):
                continue
            a = np.load(os.path.join(out, file))
            got = "bfloat16" if a.dtype.kind == "V" and a.dtype.itemsize == 2 else \
                  ("bool" if a.dtype == np.bool_ else str(a.dtype))
            check("numpy", file, key, got, a.shape, as_bytes(a, got), dtype, shape, data)

        # The reference safetensors parser reads our safetensors file.
        try:
            import safetensors
        except ImportError:
            skipped.add("safetensors")
        else:
            path = os.path.join(out, "ours.safetensors")
            with open(path, "rb") as f:
                raw = dict(safetensors.deserialize(f.read()))
            names = {v[1]: k for k, v in DTYPES.items()}
            st = [r for r in rows if r[0] == "ours.safetensors"]
            for file, key, dtype, shape, data in st:
                t = raw[key]
                check("safetensors", file, key, names[t["dtype"]], t["shape"], bytes(t["data"]),
                      dtype, shape, data)
            with safetensors.safe_open(path, framework="numpy") as f:
                if f.metadata() != {"made_by": "nuvec"}:
                    failures.append(f"safetensors: metadata {f.metadata()}")
                for file, key, dtype, shape, data in st:
                    if dtype == "bfloat16":
                        continue  # numpy has no bfloat16
                    a = f.get_tensor(key)
                    got = "bool" if a.dtype == np.bool_ else str(a.dtype)
                    check("safetensors.numpy", file, key, got, a.shape, as_bytes(a, got),
                          dtype, shape, data)

        # MLX reads both (mx.load).
        try:
            import mlx.core as mx
        except ImportError:
            skipped.add("mlx")
        else:
            # MLX reads no F64 from safetensors: the test writes a file without.
            st = mx.load(os.path.join(out, "ours_no_f64.safetensors"))
            for file, key, dtype, shape, data in rows:
                if file.endswith(".npy"):
                    a = mx.load(os.path.join(out, file))
                elif key in st:
                    a = st[key]
                else:
                    continue
                got = str(a.dtype).replace("mlx.core.", "")
                arr = np.array(a.view(mx.uint16)) if got == "bfloat16" else np.array(a)
                check("mlx", file, key, got, a.shape, as_bytes(arr, got), dtype, shape, data)

    print(f"{checks} checks, {len(failures)} failures"
          + (f"; not installed: {', '.join(sorted(skipped))}" if skipped else ""))
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
