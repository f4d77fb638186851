#!/usr/bin/python3
"""Writes the seed files of tests/corpus/image_read (run from anywhere:
/usr/bin/python3 tests/corpus/image_read_seeds.py). Seeds named ok_* must
decode and bad_* must be refused with PARSUM_ERR_BAD_FILE: the replay test
(tests/fuzz_image_read.c) checks both. PNG, PGM/PPM, PFM and HDR files are
built byte by byte here, so each one exercises a chosen path (every PNG
row filter, palettes with transparency, Adam7 interlacing, 1-bit samples,
HDR runs and dumps); the JPEG seeds come from OpenCV (python3-opencv):
baseline 4:2:0, progressive, grey and with restart markers. The files
named *fuzz_* are not made here: they are inputs the fuzzer found to
crash, hang or mislead the reader, kept so that every test run replays
them.
"""
import os
import struct
import sys
import zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image_read")


def save(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


# ---- PNG ------------------------------------------------------------------

def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filter_row(kind, row, prev, bpp):
    out = bytearray()
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        pred = [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]
        out.append((x - pred) & 0xFF)
    return bytes([kind]) + bytes(out)


def pack_row(samples, depth):
    """Samples (ints) of one row as PNG bytes at the given bit depth."""
    if depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, bits = bytearray(), 0, 0
    for s in samples:
        acc = (acc << depth) | s
        bits += depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


ADAM7 = [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4),
         (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1)]


def png(w, h, depth, ctype, pixels, interlace=False, extra=b""):
    """pixels[y][x] is a tuple of samples; rows use filters 0..4 in turn."""
    nsamp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    bpp = max(1, nsamp * depth // 8)
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    raw, row_no = bytearray(), 0
    for y0, x0, dy, dx in passes:
        xs, ys = range(x0, w, dx), range(y0, h, dy)
        if not xs or not ys:
            continue
        prev = None
        for y in ys:
            row = pack_row([s for x in xs for s in pixels[y][x]], depth)
            prev = prev or bytes(len(row))
            raw += filter_row(row_no % 5, row, prev, bpp)
            prev, row_no = row, row_no + 1
    ihdr = struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, int(interlace))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra +
            chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))


def grid(w, h, f):
    return [[f(x, y) for x in range(w)] for y in range(h)]


def png_seeds():
    save("ok_png_rgb8.png", png(7, 6, 8, 2, grid(7, 6, lambda x, y: (x * 30, y * 40, (x * y) % 256))))
    save("ok_png_grey16.png", png(5, 5, 16, 0, grid(5, 5, lambda x, y: ((x * 13001 + y * 7) % 65536,))))
    save("ok_png_ga8.png", png(4, 3, 8, 4, grid(4, 3, lambda x, y: (x * 60, 255 - y * 80))))
    save("ok_png_rgba16.png", png(3, 4, 16, 6, grid(3, 4, lambda x, y: (x * 9000, y * 9000, 65535, 300 * x))))
    plte = chunk(b"PLTE", bytes(range(48)))  # 16 entries
    trns = chunk(b"tRNS", bytes([0, 128, 255]))
    save("ok_png_pal4_trns.png", png(9, 5, 4, 3, grid(9, 5, lambda x, y: ((x + y) % 16,)), extra=plte + trns))
    save("ok_png_grey1_adam7.png", png(11, 9, 1, 0, grid(11, 9, lambda x, y: ((x ^ y) & 1,)), interlace=True))
    save("ok_png_rgb8_adam7.png", png(10, 10, 8, 2, grid(10, 10, lambda x, y: (x * 25, y * 25, 100)), interlace=True))
    save("ok_png_grey8_trns.png", png(4, 4, 8, 0, grid(4, 4, lambda x, y: (x * 64,)),
                                      extra=chunk(b"tRNS", struct.pack(">H", 64))))
    good = png(6, 4, 8, 2, grid(6, 4, lambda x, y: (x, y, 7)))
    save("bad_png_truncated.png", good[:len(good) - 20])
    save("bad_png_no_iend.png", good[:len(good) - 12])
    bomb = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16384, 16384, 8, 6, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(bytes(1000), 9)) + chunk(b"IEND", b""))
    save("bad_png_bomb.png", bomb)


# ---- netpbm and PFM -------------------------------------------------------

def pnm_seeds():
    save("ok_pgm8.pgm", b"P5\n# seed\n4 3\n255\n" + bytes(range(0, 240, 20)))
    save("ok_pgm16.pgm", b"P5 3 2 1000\n" + b"".join(struct.pack(">H", v) for v in (0, 1, 999, 1000, 500, 256)))
    save("ok_ppm8.ppm", b"P6\n3 2\n255\n" + bytes(range(18)))
    save("ok_ppm16.ppm", b"P6\n2 2\n65535\n" + bytes(range(24)))
    save("ok_pfm_grey_le.pfm", b"Pf\n3 2\n-1.0\n" + struct.pack("<6f", 0, 1, 2, 3.5, -4, 1e30))
    save("ok_pfm_rgb_be.pfm", b"PF\n2 1\n1.0\n" + struct.pack(">6f", 1, 2, 3, 4, 5, 6))
    save("bad_pgm_truncated.pgm", b"P5\n4 3\n255\n" + bytes(11))
    save("bad_pgm_huge.pgm", b"P5\n100000 100000\n255\n" + bytes(16))
    save("bad_pgm_maxval.pgm", b"P5\n2 1\n15\n\x0f\x10")
    save("bad_pfm_scale0.pfm", b"Pf\n1 1\n0.0\n" + bytes(4))


# ---- Radiance HDR -------------------------------------------------------

HDR_HEAD = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n"


def rle_line(w, comps):
    """One new-style RLE scanline: comps[k] is the list of w bytes."""
    out = bytearray([2, 2, w >> 8, w & 255])
    for vals in comps:
        i = 0
        while i < w:
            run = 1
            while i + run < w and vals[i + run] == vals[i] and run < 127:
                run += 1
            if run >= 3:
                out += bytes([128 + run, vals[i]])
                i += run
            else:
                n = min(w - i, 128)
                out += bytes([n]) + bytes(vals[i:i + n])
                i += n
    return bytes(out)


def hdr_seeds():
    flat = bytes(b for i in range(4 * 3) for b in (i * 20, 100, 50, 130))
    save("ok_hdr_flat.hdr", HDR_HEAD + b"-Y 3 +X 4\n" + flat)
    w = 16
    lines = b"".join(rle_line(w, [[r * 10] * 8 + list(range(8)), [200] * w, list(range(w)), [129] * w])
                     for r in range(3))
    save("ok_hdr_rle.hdr", HDR_HEAD + b"-Y 3 +X 16\n" + lines)
    save("bad_hdr_truncated.hdr", HDR_HEAD + b"-Y 3 +X 16\n" + lines[:-3])
    # A dump of length 0 never advances: stb 2.27 loops forever on it.
    save("bad_hdr_zero_run.hdr", HDR_HEAD + b"-Y 1 +X 8\n" + bytes([2, 2, 0, 8, 0]))
    save("bad_hdr_no_format.hdr", b"#?RADIANCE\n\n-Y 1 +X 1\n" + bytes(4))


# ---- JPEG (OpenCV) --------------------------------------------------------

def jpeg_seeds():
    import cv2
    import numpy as np
    y, x = np.mgrid[0:19, 0:23]
    rgb = np.dstack([(x * 11) % 256, (y * 13) % 256, ((x + y) * 5) % 256]).astype(np.uint8)
    grey = ((x * 7 + y * 3) % 256).astype(np.uint8)
    cases = [("ok_jpg_baseline420.jpg", rgb, [cv2.IMWRITE_JPEG_QUALITY, 80]),
             ("ok_jpg_progressive.jpg", rgb, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
             ("ok_jpg_grey.jpg", grey, [cv2.IMWRITE_JPEG_QUALITY, 90]),
             ("ok_jpg_restart.jpg", rgb, [cv2.IMWRITE_JPEG_RST_INTERVAL, 1])]
    for name, img, params in cases:
        ok, buf = cv2.imencode(".jpg", img, params)
        assert ok
        save(name, buf.tobytes())
    ok, buf = cv2.imencode(".jpg", rgb)
    data = buf.tobytes()
    save("bad_jpg_truncated.jpg", data[:len(data) * 2 // 3])
    save("bad_jpg_no_scan.jpg", data[:data.index(b"\xff\xda")] + b"\xff\xd9")
    # A Huffman table of 16 * 255 codes: stb 2.27 writes past its arrays.
    dht = data.index(b"\xff\xc4") + 5
    save("bad_jpg_dht_overflow.jpg", data[:dht] + b"\xff" * 16 + data[dht + 16:])


def main():
    os.makedirs(OUT, exist_ok=True)
    png_seeds()
    pnm_seeds()
    hdr_seeds()
    jpeg_seeds()
    print("seeds written to", OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
