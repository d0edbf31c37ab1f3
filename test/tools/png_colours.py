#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Counts the pixels of given exact colours in a PNG, with the standard library only.

Usage: png_colours.py FILE.png RRGGBB...
Prints "RRGGBB COUNT" for each colour asked for, then "size WIDTHxHEIGHT".
Exit status 2 when the file is not a PNG this decoder handles (8-bit RGB or RGBA,
grey or palette, not interlaced).
"""
import struct
import sys
import zlib


def fail(message):
    print(f"png_colours.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_chunks(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("not a PNG")
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + length]
        pos += 12 + length


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(raw, width, height, bpp):
    stride = width * bpp
    rows = []
    prev = bytearray(stride)
    pos = 0
    for _ in range(height):
        kind = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xFF
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, prev[i], up_left)) & 0xFF
        elif kind != 0:
            fail(f"unknown filter {kind}")
        rows.append(line)
        prev = line
    return rows


def main():
    if len(sys.argv) < 2:
        fail("usage: png_colours.py FILE.png RRGGBB...")
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    header = None
    palette = b""
    idat = []
    for kind, body in read_chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = body
        elif kind == b"IDAT":
            idat.append(body)
    if header is None:
        fail("no IHDR chunk")
    width, height, depth, colour_type, _, _, interlace = header
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(colour_type)
    if depth != 8 or channels is None or interlace != 0:
        fail(f"unsupported PNG: depth {depth}, colour type {colour_type}, interlace {interlace}")
    rows = unfilter(zlib.decompress(b"".join(idat)), width, height, channels)

    wanted = {c.lower(): 0 for c in sys.argv[2:]}
    counts = {}
    for line in rows:
        for i in range(0, len(line), channels):
            if colour_type in (2, 6):
                key = bytes(line[i:i + 3])
            elif colour_type == 3:
                key = palette[line[i] * 3:line[i] * 3 + 3]
            else:
                key = bytes([line[i]] * 3)
            counts[key] = counts.get(key, 0) + 1
    for colour in wanted:
        wanted[colour] = counts.get(bytes.fromhex(colour), 0)
        print(f"{colour} {wanted[colour]}")
    print(f"size {width}x{height}")


if __name__ == "__main__":
    main()
