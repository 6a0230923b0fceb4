#!/usr/bin/env python3
"""Writes the GGUF fixtures of tests/gguf_test.cpp and what MLX loads from them.

The files are made by the gguf package (GGUFWriter, and gguf.quants for
Q4_0, Q4_1 and Q8_0), by MLX (mx.save_gguf), and by hand with struct where
the gguf package refuses to write something MLX reads (empty metadata
arrays) or where a file must be malformed in one way. Each file is loaded
with mx.load(path, return_metadata=True) and what MLX returns is written to
tests/refs/gguf.ref, so the C++ tests run without Python:

    # comment
    file <name> <mlx|numpy|refused> [resave]
    tensor <name, hex> <dtype> <shape: d0,d1 or - for 0-d> <C-order bytes, hex, or ->
    meta <key, hex> array <dtype> <shape> <bytes, hex, or ->
    meta <key, hex> string <utf-8 bytes, hex, or ->
    meta <key, hex> strings <count> <hex or -> ...
    mlx_error <what MLX raised>
    end

"numpy" marks a file MLX 0.32.4 cannot load (it crashes on float64
metadata: it steps over 4 bytes of each 8-byte value), whose expected values
come from numpy instead (float64 rounded to float32, as MLX's code means).
"refused" marks a file MLX refuses, with its message. "resave" marks a file
MLX wrote with one entry of each kind, which nuvec's save_gguf must write
byte for byte the same (with more entries MLX's order is its hash map's).

The script also checks what MLX returned against independent computations:
the packed weights against the GGUF nibbles and bytes, the dequantized
values against gguf.quants.dequantize, BF16 against numpy's float32 to
float16 rounding.

    python3 tools/record_gguf_fixtures.py            # from the repository root
    python3 tools/record_gguf_fixtures.py --check-nuvec build/gguf/tests/nuvec_tests

--check-nuvec runs the test binary's GgufInterop.WriteFilesForMlx, which
re-saves every fixture nuvec can save, and loads those files with MLX and
with gguf.GGUFReader, comparing them with MLX's load of the originals.
"""
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import gguf
import mlx.core as mx
from gguf import GGMLQuantizationType as T
from gguf import GGUFValueType as V

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "tests", "fixtures", "gguf")
REF = os.path.join(HERE, "..", "tests", "refs", "gguf.ref")

# mx dtype -> (name in the ref, numpy dtype of the same bytes)
MX_DTYPES = {
    mx.bool_: ("bool", np.uint8), mx.uint8: ("uint8", np.uint8), mx.int8: ("int8", np.int8),
    mx.uint16: ("uint16", np.uint16), mx.int16: ("int16", np.int16),
    mx.uint32: ("uint32", np.uint32), mx.int32: ("int32", np.int32),
    mx.uint64: ("uint64", np.uint64), mx.int64: ("int64", np.int64),
    mx.float16: ("float16", np.uint16), mx.float32: ("float32", np.uint32),
}

lines = []


def hexs(b):
    return b.hex() if len(b) else "-"


def shape_text(shape):
    return ",".join(str(d) for d in shape) or "-"


def mx_bytes(a):
    name, view = MX_DTYPES[a.dtype]
    if a.dtype == mx.bool_:
        return name, np.array(a).astype(np.uint8).tobytes()
    if a.dtype in (mx.float16, mx.float32):
        a = a.view(mx.uint16 if a.dtype == mx.float16 else mx.uint32)
    return name, np.ascontiguousarray(np.array(a)).astype(np.dtype(view).newbyteorder("<")).tobytes()


def record_loaded(arrays, meta):
    for name in sorted(arrays):
        a = arrays[name]
        dt, raw = mx_bytes(a)
        lines.append(f"tensor {name.encode().hex()} {dt} {shape_text(a.shape)} {hexs(raw)}")
    for key in sorted(meta):
        v = meta[key]
        k = key.encode().hex()
        if isinstance(v, mx.array):
            dt, raw = mx_bytes(v)
            lines.append(f"meta {k} array {dt} {shape_text(v.shape)} {hexs(raw)}")
        elif isinstance(v, str):
            lines.append(f"meta {k} string {hexs(v.encode())}")
        else:
            lines.append(f"meta {k} strings {len(v)}" + "".join(" " + hexs(s.encode()) for s in v))


def path_of(name):
    return os.path.join(FIXTURES, name)


def record(name, resave=False):
    arrays, meta = mx.load(path_of(name), return_metadata=True)
    lines.append(f"file {name} mlx" + (" resave" if resave else ""))
    record_loaded(arrays, meta)
    lines.append("end")
    return arrays, meta


def record_refused(name):
    try:
        mx.load(path_of(name), return_metadata=True)
    except Exception as e:  # MLX raises ValueError or RuntimeError
        lines.append(f"file {name} refused")
        lines.append(f"mlx_error {type(e).__name__}: {e}")
        lines.append("end")
        return
    raise SystemExit(f"{name}: MLX was expected to refuse it")


def writer_file(name, tensors=(), kvs=(), alignment=None):
    """A file written by the gguf package: tensors (name, array, raw type or
    None) and metadata (key, value, type, element type or None)."""
    w = gguf.GGUFWriter(path_of(name), "nuvec")
    if alignment is not None:
        w.add_custom_alignment(alignment)
    for key, value, vtype, sub in kvs:
        w.add_key_value(key, value, vtype, sub_type=sub)
    for tname, arr, raw in tensors:
        w.add_tensor(tname, arr, raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def gguf_string(s):
    return struct.pack("<Q", len(s)) + s


def hand_file(name, kvs, tensors, data):
    """A GGUF 3 file from raw parts: kvs are (key, type, payload bytes),
    tensors (name, ggml dims, type, offset); the data section follows the
    infos at the next multiple of 32."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, vtype, payload in kvs:
        out += gguf_string(key) + struct.pack("<I", vtype) + payload
    for tname, dims, ttype, off in tensors:
        out += gguf_string(tname) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", ttype, off)
    out += b"\0" * (-len(out) % 32)
    with open(path_of(name), "wb") as f:
        f.write(out + data)


# ------------------------------------------------------------------ values

rng = np.random.default_rng(20241201)

F32_SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-40, 3.4028235e38,
                         1.1754944e-38, 1.0, -2.5], dtype=np.float32)
F16_SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 6e-8, -6.1e-5, 65504, 1.0, -2.5],
                        dtype=np.float16)


def bf16_cases():
    """bfloat16 bit patterns that exercise float16 rounding: exact values,
    subnormal float16 results and their ties, underflow, overflow, NaNs."""
    special = [0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81,
               0xff81, 0x7fff, 0x477f, 0x4780, 0xc780, 0x4700, 0x3880, 0x3800, 0x3780,
               0x3300, 0x3340, 0x3380, 0x33c0, 0x3301, 0x32ff, 0x3280, 0x3400, 0x3401,
               0x0001, 0x8001, 0x0080, 0x3c01, 0x7f7f, 0xff7f, 0x1234, 0xb3c0]
    return np.concatenate([np.array(special, np.uint16),
                           rng.integers(0, 65536, 221, dtype=np.uint16)])


def int_values(dtype, n):
    info = np.iinfo(dtype)
    v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    v[:2] = [info.min, info.max]
    return v


def quant_inputs(last):
    """float32 rows that Q4_0, Q4_1 and Q8_0 see: random, constant, zero,
    negative-only, large, and tiny blocks."""
    blocks = [rng.standard_normal(32) * 3, np.full(32, 0.5), np.zeros(32),
              -np.abs(rng.standard_normal(32)) - 1, rng.standard_normal(32) * 5000,
              rng.standard_normal(32) * 1e-6, np.linspace(-1, 1, 32)]
    row = np.concatenate([blocks[i % len(blocks)] for i in range(last // 32)])
    return row.astype(np.float32)


def crafted_blocks(qtype, scales):
    """Raw blocks with chosen float16 scale bits (and minimums for Q4_1) and
    random quants, so that bias = -8 d or -128 d meets overflow, subnormals,
    signed zeros, infinities and NaN."""
    out = []
    for s in scales:
        d = struct.pack("<H", s)
        if qtype == T.Q4_0:
            out.append(d + rng.integers(0, 256, 16, dtype=np.uint8).tobytes())
        elif qtype == T.Q4_1:
            m = struct.pack("<H", scales[(scales.index(s) + 3) % len(scales)])
            out.append(d + m + rng.integers(0, 256, 16, dtype=np.uint8).tobytes())
        else:
            out.append(d + rng.integers(0, 256, 32, dtype=np.uint8).tobytes())
    return np.frombuffer(b"".join(out), np.uint8)


SCALE_BITS = [0x3c00, 0x7bff, 0x7000, 0x6fff, 0x6000, 0x5fff, 0x0001, 0x03ff, 0x8000,
              0x0000, 0x7c00, 0xfc00, 0x7e00, 0xbc00, 0x2e66, 0x8401]

# --------------------------------------------------------- independent checks


def unpack(w, bits):
    """MLX's packed uint32 words (element 0 in the lowest bits) as integers."""
    b = np.array(w).view(np.uint8).reshape(-1)
    if bits == 8:
        return b.astype(np.int64)
    return np.stack([b & 15, b >> 4], axis=-1).reshape(-1).astype(np.int64)


def check_quantized(name, arrays, qtype, raw_bytes, shape):
    stem = name[: -len(".weight")] if name.endswith(".weight") else name
    bits = 8 if qtype == T.Q8_0 else 4
    q = unpack(arrays[name], bits)
    scales = np.array(arrays[stem + ".scales"]).reshape(-1)
    biases = np.array(arrays[stem + ".biases"]).reshape(-1)
    bpb = gguf.GGML_QUANT_SIZES[qtype][1]
    blocks = np.frombuffer(raw_bytes, np.uint8).reshape(-1, bpb)
    off = 4 if qtype == T.Q4_1 else 2
    # The quants themselves, read from the GGUF bytes.
    if bits == 8:
        want_q = (blocks[:, off:].view(np.int8).astype(np.int64) + 128).reshape(-1)
    else:
        nib = blocks[:, off:]
        want_q = np.concatenate([nib & 15, nib >> 4], axis=1).reshape(-1).astype(np.int64)
    assert np.array_equal(q, want_q), name
    assert np.array_equal(scales.view(np.uint16), blocks[:, :2].copy().view(np.uint16).reshape(-1)), name
    # Dequantized values equal gguf's wherever nothing overflowed.
    ref = gguf.quants.dequantize(blocks.reshape(-1), qtype).reshape(-1)
    s = np.repeat(scales.astype(np.float32), 32)
    b = np.repeat(biases.astype(np.float32), 32)
    with np.errstate(all="ignore"):
        got = s * q.astype(np.float32) + b
        ok = np.isfinite(b) & np.isfinite(ref) & (np.abs(ref) < 60000)
    assert np.array_equal(got[ok], ref.astype(np.float32)[ok]), name
    assert arrays[name].shape[:-1] == tuple(shape[:-1])


def check_bf16(bits, loaded):
    got = np.array(loaded.view(mx.uint16)).reshape(-1)
    f = (bits.astype(np.uint32) << 16).view(np.float32)
    with np.errstate(over="ignore"):
        want = f.astype(np.float16).view(np.uint16)
    nan = np.isnan(f)
    assert np.array_equal(got[~nan], want[~nan])
    assert np.all((got[nan] & 0x7fff) == 0x7e00)


# ------------------------------------------------------------------ fixtures


def plain():
    f32 = np.concatenate([F32_SPECIALS, rng.standard_normal(4).astype(np.float32)]).reshape(3, 5)
    f16 = np.concatenate([F16_SPECIALS, rng.standard_normal(15).astype(np.float16)]).reshape(2, 3, 4)
    bits = bf16_cases()
    tensors = [
        ("f32", f32, None), ("f16", f16, None),
        ("bf16", bits.reshape(16, 16), T.BF16),
        ("i8", int_values(np.int8, 7), None),
        ("i16", int_values(np.int16, 6).reshape(2, 3), None),
        ("i32", int_values(np.int32, 10).reshape(1, 2, 5), None),
        ("scalar", np.array(-1.25, np.float32), None),
        ("one", np.array([7.0], np.float32), None),
        ("empty", np.zeros((0, 3), np.float16), None),
        ("blk.0.odd shape/name", rng.standard_normal((3, 1, 7)).astype(np.float32), None),
    ]
    writer_file("plain.gguf", tensors)
    arrays, _ = record("plain.gguf")
    check_bf16(bits, arrays["bf16"])


def quantized():
    tensors, raws = [], {}
    for qtype, tag in [(T.Q4_0, "q4_0"), (T.Q4_1, "q4_1"), (T.Q8_0, "q8_0")]:
        for name, shape in [(f"{tag}.weight", (3, 224)), (f"blk.{tag}.3d.weight", (2, 2, 32)),
                            (tag[:2] + tag[3], (1, 64))]:
            x = np.stack([quant_inputs(shape[-1]) * (r + 1) for r in range(int(np.prod(shape[:-1])))])
            raw = gguf.quants.quantize(x.reshape(shape), qtype)
            tensors.append((name, raw, qtype))
            raws[name] = (qtype, raw.tobytes(), shape)
        crafted = crafted_blocks(qtype, SCALE_BITS).reshape(2, -1)
        name = f"crafted.{tag}.weight"
        tensors.append((name, crafted, qtype))
        raws[name] = (qtype, crafted.tobytes(), (2, 8 * 32))
    writer_file("quant.gguf", tensors)
    arrays, _ = record("quant.gguf")
    with np.errstate(invalid="ignore", over="ignore"):  # the NaN and inf scales
        for name, (qtype, raw, shape) in raws.items():
            check_quantized(name, arrays, qtype, raw, shape)


def metadata():
    kvs = [
        ("u8", 200, V.UINT8, None), ("i8", -100, V.INT8, None), ("u16", 60000, V.UINT16, None),
        ("i16", -30000, V.INT16, None), ("u32", 4000000000, V.UINT32, None),
        ("i32", -2000000000, V.INT32, None), ("u64", 2**64 - 1, V.UINT64, None),
        ("i64", -2**63, V.INT64, None), ("f32", 1.1, V.FLOAT32, None),
        ("f32.nan", float("nan"), V.FLOAT32, None), ("f32.-inf", float("-inf"), V.FLOAT32, None),
        ("bool.true", True, V.BOOL, None), ("bool.false", False, V.BOOL, None),
        ("str", "héllo wörld ✓", V.STRING, None), ("str.empty", "", V.STRING, None),
        ("str.controls", "tab\tnew\nline \x00 nul", V.STRING, None),
        ("arr.u8", [0, 1, 255], V.ARRAY, V.UINT8), ("arr.i8", [-128, 0, 127], V.ARRAY, V.INT8),
        ("arr.u16", [0, 65535], V.ARRAY, V.UINT16), ("arr.i16", [-32768, 32767], V.ARRAY, V.INT16),
        ("arr.u32", [0, 2**32 - 1, 5], V.ARRAY, V.UINT32),
        ("arr.i32", [-2**31, 2**31 - 1], V.ARRAY, V.INT32),
        ("arr.u64", [0, 2**64 - 1], V.ARRAY, V.UINT64),
        ("arr.i64", [-2**63, 2**63 - 1, -1], V.ARRAY, V.INT64),
        ("arr.f32", [1.5, -0.0, 3.4e38, 1e-45], V.ARRAY, V.FLOAT32),
        ("arr.bool", [True, False, True], V.ARRAY, V.BOOL),
        ("arr.str", ["a", "", "ünï", "d e"], V.ARRAY, V.STRING),
        ("tokenizer.ggml.tokens", [f"tok{i}" for i in range(40)], V.ARRAY, V.STRING),
        ("general.name", "fixture", V.STRING, None),
    ]
    writer_file("meta.gguf", [("t", np.arange(4, dtype=np.int32), None)], kvs)
    record("meta.gguf")
    # Empty arrays, which the gguf package does not write, and bool bytes
    # other than 0 and 1 (read as true).
    kvs = [(b"empty.i32", 9, struct.pack("<IQ", 5, 0)),
           (b"empty.str", 9, struct.pack("<IQ", 8, 0)),
           (b"bool.two", 7, b"\x02"),
           (b"arr.bool.bytes", 9, struct.pack("<IQ", 7, 3) + b"\x00\x02\xff")]
    hand_file("meta_hand.gguf", kvs, [], b"")
    record("meta_hand.gguf")


def metadata_f64():
    kvs = [("f64", 1.1, V.FLOAT64, None), ("f64.big", 1e300, V.FLOAT64, None),
           ("f64.tiny", 1e-300, V.FLOAT64, None), ("arr.f64", [0.1, -2.5, 1e39], V.ARRAY, V.FLOAT64),
           ("after", 7, V.UINT32, None)]
    writer_file("meta_f64.gguf", [("t", np.array([1.0, 2.0], np.float32), None)], kvs)
    probe = subprocess.run([sys.executable, "-c", "import mlx.core as mx, sys; "
                            f"mx.load({path_of('meta_f64.gguf')!r}, return_metadata=True)"],
                           capture_output=True)
    lines.append(f"# MLX {mx.__version__} loading meta_f64.gguf: exit status {probe.returncode}"
                 " (negative: killed by that signal)")
    lines.append("file meta_f64.gguf numpy")
    lines.append(f"tensor {b't'.hex()} float32 2 {np.array([1.0, 2.0], np.float32).tobytes().hex()}")
    meta = {"after": mx.array(7, mx.uint32), "general.architecture": "nuvec"}
    with np.errstate(over="ignore"):  # 1e300 and 1e39 become inf
        for key, value, vtype, _ in kvs:
            if vtype in (V.FLOAT64, V.ARRAY):
                meta[key] = mx.array(np.array(value, np.float64).astype(np.float32))
    record_loaded({}, meta)  # the tensor line is above
    lines.append("end")


def aligned():
    writer_file("align64.gguf", [("a", np.arange(3, dtype=np.float32), None),
                                 ("b", np.arange(5, dtype=np.int16), None),
                                 ("c", np.ones((2, 2), np.float16), None)], alignment=64)
    record("align64.gguf")


def mlx_written():
    path = path_of("mlx_saved.gguf")
    arrays = {"f32": mx.array(np.arange(6, dtype=np.float32).reshape(2, 3) / 3),
              "f16": mx.array([1.5, -0.0, 65504, 6e-8], mx.float16),
              "i8": mx.array([-128, 0, 127, 5, -1], mx.int8),
              "i16": mx.array([[-32768, 1], [2, 32767]], mx.int16),
              "i32": mx.array(-7, mx.int32), "empty": mx.zeros((0, 3)),
              "five.d": mx.arange(4, dtype=mx.float32).reshape(1, 2, 1, 2, 1)}
    meta = {"s": "text ✓", "strs": ["x", "", "yz"], "no.strs": []}
    for dt in [mx.bool_, mx.uint8, mx.int8, mx.uint16, mx.int16, mx.uint32, mx.int32,
               mx.uint64, mx.int64, mx.float32]:
        n = MX_DTYPES[dt][0]
        meta[f"scalar.{n}"] = mx.array(1, dt)
        meta[f"array.{n}"] = mx.array([0, 1, 1], dt)
    mx.save_gguf(path, arrays, meta)
    record("mlx_saved.gguf")
    # One entry of each kind: nuvec must write the same bytes.
    mx.save_gguf(path_of("mlx_one_tensor.gguf"),
                 {"w": mx.array(np.arange(6, dtype=np.float32).reshape(3, 2))}, {"name": "one"})
    record("mlx_one_tensor.gguf", resave=True)
    mx.save_gguf(path_of("mlx_one_meta.gguf"), {}, {"v": mx.array([1, -2, 3], mx.int64)})
    record("mlx_one_meta.gguf", resave=True)
    mx.save_gguf(path_of("mlx_scalars.gguf"), {"s": mx.array(2.5, mx.float16)},
                 {"u": mx.array(2**40, mx.uint64)})
    record("mlx_scalars.gguf", resave=True)
    mx.save_gguf(path_of("mlx_strings.gguf"), {"q": mx.array([[1, 2, 3]], mx.int16)},
                 {"tokens": ["<s>", "", "é"]})
    record("mlx_strings.gguf", resave=True)


def refused():
    writer_file("f64_tensor.gguf", [("x", np.array([1.0, 2.0]), None)])
    record_refused("f64_tensor.gguf")
    writer_file("i64_tensor.gguf", [("x", np.array([1, 2], np.int64), None)])
    record_refused("i64_tensor.gguf")
    hand_file("nested.gguf", [(b"n", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 1)
                               + struct.pack("<I", 7))], [], b"")
    record_refused("nested.gguf")
    hand_file("duplicate_tensor.gguf", [], [(b"t", [1], 0, 0), (b"t", [1], 0, 32)],
              struct.pack("<f", 1) + b"\0" * 28 + struct.pack("<f", 2))
    record_refused("duplicate_tensor.gguf")


def check_nuvec(binary):
    """nuvec re-saves the fixtures; MLX and gguf.GGUFReader must read them
    as MLX reads the originals."""
    failures = 0
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, NUVEC_GGUF_INTEROP_DIR=out)
        subprocess.run([binary, "--gtest_filter=GgufInterop.WriteFilesForMlx"], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        # The originals MLX cannot load (it crashes on meta_f64.gguf) are
        # left out; the ref says which.
        with open(REF, encoding="utf-8") as f:
            mlx_loads = {l.split()[1] for l in f if l.startswith("file ") and l.split()[2] == "mlx"}
        names = sorted(n for n in os.listdir(out) if n in mlx_loads)
        for name in names:
            original = path_of(name)
            got_a, got_m = mx.load(os.path.join(out, name), return_metadata=True)
            want_a, want_m = mx.load(original, return_metadata=True)
            gguf.GGUFReader(os.path.join(out, name))  # parses, or raises
            for k, v in want_a.items():
                if k not in got_a or mx_bytes(got_a[k]) != mx_bytes(v) or got_a[k].shape != v.shape:
                    print(f"{name}: tensor {k} differs")
                    failures += 1
            for k, v in want_m.items():
                g = got_m.get(k)
                same = (isinstance(v, mx.array) and isinstance(g, mx.array) and g.shape == v.shape
                        and mx_bytes(g) == mx_bytes(v)) or (not isinstance(v, mx.array) and g == v)
                if not same:
                    print(f"{name}: metadata {k} differs")
                    failures += 1
            if set(got_a) != set(want_a) or set(got_m) != set(want_m):
                print(f"{name}: different names")
                failures += 1
        print(f"{len(names)} files re-saved by nuvec checked with MLX {mx.__version__}: "
              f"{failures} failures")
    return failures == 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check-nuvec":
        sys.exit(0 if check_nuvec(sys.argv[2]) else 1)
    os.makedirs(FIXTURES, exist_ok=True)
    for f in os.listdir(FIXTURES):
        if f.endswith(".gguf"):
            os.remove(path_of(f))
    lines.append("# Written by tools/record_gguf_fixtures.py; read by tests/gguf_test.cpp.")
    lines.append(f"# versions: python {sys.version.split()[0]} numpy {np.__version__} "
                 f"gguf {gguf.__version__ if hasattr(gguf, '__version__') else gguf_version()} "
                 f"mlx {mx.__version__}")
    plain()
    quantized()
    metadata()
    metadata_f64()
    aligned()
    mlx_written()
    refused()
    with open(REF, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(os.path.getsize(path_of(f)) for f in os.listdir(FIXTURES))
    print(f"wrote {len(os.listdir(FIXTURES))} fixtures ({total} bytes) and {REF}")


def gguf_version():
    from importlib.metadata import version
    return version("gguf")


if __name__ == "__main__":
    main()
