"""The tensor hash libsamebits computes (harness/trace/hash.c,
harness/FORMATS.md "Tensor hash"), and the test vectors it shares with
tools/interop/hash_vectors.c."""
import struct

import numpy as np
import xxhash

LEAF_BYTES = 1 << 18                            # SB_HASH_LEAF_BYTES
DTYPE_CODES = {np.dtype("<f4"): 0, np.dtype("<i4"): 1, np.dtype("<i8"): 2}
DTYPE_NAMES = {0: "f32", 1: "i32", 2: "i64"}
MAX_DIMS = 4


def canonical(array):
    """The array as libsamebits sees it: f32, i32 or i64, C order,
    little-endian. 64-bit integers stay i64 (uint64 must fit in int64), the
    narrower ones become i32 (uint32 must fit in int32); other dtypes are
    refused."""
    a = np.asarray(array)
    if a.dtype.kind == "f":
        if a.dtype != np.float32:
            raise TypeError(f"only float32 tensors can be hashed, not {a.dtype}")
        out = a.astype("<f4", copy=False)
    elif a.dtype.kind in "iu":
        wide = a.dtype.itemsize == 8
        out = a.astype("<i8" if wide else "<i4", copy=False)
        if not np.array_equal(out, a):
            raise ValueError(f"integer tensor does not fit in int{64 if wide else 32}")
    else:
        raise TypeError(f"cannot hash a {a.dtype} tensor")
    if out.ndim > MAX_DIMS:
        raise ValueError(f"at most {MAX_DIMS} dimensions, not {out.ndim}")
    # not np.ascontiguousarray, which turns a 0-d array (a loss) into 1-d
    return out if out.flags.c_contiguous else out.copy(order="C")


def tensor_hash(array):
    """Tree XXH3-128 (16 canonical bytes): the header (dtype code, ndim, sizes
    as little-endian uint64), then the XXH3-128 of each 256 KiB leaf of the
    raw bytes, hashed together in order."""
    a = canonical(array)
    header = struct.pack(f"<{2 + a.ndim}Q", DTYPE_CODES[a.dtype], a.ndim, *a.shape)
    data = a.tobytes()
    leaves = b"".join(xxhash.xxh3_128(data[off:off + LEAF_BYTES]).digest()
                      for off in range(0, len(data), LEAF_BYTES))
    return xxhash.xxh3_128(header + leaves).digest()


def test_vectors():
    """Tensors defined by formulas that tools/interop/hash_vectors.c repeats
    in C: scalar, empty, small, more than one leaf, exactly one leaf, one
    leaf and 4 bytes, and special values (signed zero, infinities, NaN,
    subnormal, largest float) given by their bits."""
    n3 = 3 * 300 * 300
    spread = (np.arange(n3, dtype=np.uint64) * 7919) % 1000003

    def words(n):
        return ((np.arange(n, dtype=np.uint64) * 2654435761) % 2 ** 32).astype(np.uint32)
    special = np.array([0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                        0x00000001, 0x7f7fffff], dtype=np.uint32)
    return [
        ("f32_scalar", np.array(1.5, dtype=np.float32)),
        ("f32_empty", np.zeros(0, dtype=np.float32)),
        ("f32_3", np.array([1.0, -2.0, 0.5], dtype=np.float32)),
        ("i32_2x3", (np.arange(6, dtype=np.int32) - 3).reshape(2, 3)),
        ("i64_2x3", np.array([-3, -2, -1, 0, 1, 1 << 40], dtype=np.int64).reshape(2, 3)),
        ("f32_3x300x300", (spread.astype(np.float32) - np.float32(500000)).reshape(3, 300, 300)),
        ("i32_65536", words(65536).view(np.int32)),
        ("i32_65537", words(65537).view(np.int32)),
        ("f32_special_1x1x1x7", special.view(np.float32).reshape(1, 1, 1, 7)),
    ]
