"""OpenCV as the oracle of test_image_io.c (run by /usr/bin/python3 with
python3-opencv): argv[1] is the mode, argv[2] a spec file of tab-separated
lines.

check: cv2.imread each file and compare with raw samples in parsum's
    layout (interleaved RGB(A) rows, native byte order). Lines: file, raw,
    width, height, channels, numpy dtype, tolerance (absolute; a negative
    one is relative to the pixel's largest channel).
make: cv2.imwrite a test pattern of each kind and dump, as raw samples,
    what cv2.imread decodes from the file. Lines: file, raw, width,
    height, kind.
Exits 1 after printing every mismatch.
"""
import sys

import cv2
import numpy as np


def rgb(a):
    """OpenCV's BGR(A) as RGB(A) and back; grey gets a channel axis."""
    if a.ndim == 2:
        return a[:, :, None]
    if a.shape[2] == 3:
        return a[:, :, ::-1]
    return a[:, :, [2, 1, 0, 3]]


def pattern(kind, w, h):
    y, x = np.mgrid[0:h, 0:w]

    def ramp(c, m):
        return (x * (29 + 1000 * (m > 256)) + y * 977 + c * 12345) % m

    if kind == "png16":
        return np.dstack([ramp(c, 65536) for c in range(3)]).astype(np.uint16)
    if kind == "png8a":
        return np.dstack([ramp(c, 256) for c in range(4)]).astype(np.uint8)
    if kind == "ppm8":
        return np.dstack([ramp(c, 256) for c in range(3)]).astype(np.uint8)
    if kind == "pgm16":
        return ramp(0, 65536).astype(np.uint16)
    if kind == "jpggrey":
        return (128 + 100 * np.sin(0.1 * x + 0.05 * y)).astype(np.uint8)
    if kind == "pfm3":
        return np.dstack([ramp(c, 1000) / 7.0 - 50 for c in range(3)]).astype(np.float32)
    if kind == "hdr":
        return np.dstack([ramp(c, 1000) / 9.0 + 0.5 for c in range(3)]).astype(np.float32)
    raise SystemExit("unknown kind " + kind)


def make(f):
    a = pattern(f[4], int(f[2]), int(f[3]))
    if not cv2.imwrite(f[0], rgb(a) if a.ndim == 3 else a):
        print("cv2 cannot write", f[0])
        return 1
    np.ascontiguousarray(rgb(cv2.imread(f[0], cv2.IMREAD_UNCHANGED))).tofile(f[1])
    return 0


def check(f):
    w, h, c, tol = int(f[2]), int(f[3]), int(f[4]), float(f[6])
    want = np.fromfile(f[1], dtype=f[5]).reshape(h, w, c)
    got = cv2.imread(f[0], cv2.IMREAD_UNCHANGED)
    if got is None:
        print("cv2 cannot read", f[0])
        return 1
    got = rgb(got)
    if got.shape != want.shape or got.dtype != want.dtype:
        print(f[0], "cv2 reads", got.shape, got.dtype, "want", want.shape, want.dtype)
        return 1
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    lim = tol if tol >= 0 else -tol * np.abs(want.astype(np.float64)).max(axis=2, keepdims=True)
    if (err > lim).any():
        print(f[0], "max error", err.max())
        return 1
    return 0


def main():
    run = make if sys.argv[1] == "make" else check
    bad = 0
    with open(sys.argv[2]) as spec:
        for line in spec.read().splitlines():
            bad += run(line.split("\t"))
    sys.exit(1 if bad else 0)


main()
