"""A request comes as frames: a line with the length in bytes of the JSON line that follows."""

from __future__ import annotations

import os

from .output import CHUNK


def read_line(fd: int) -> bytes:
    """One line from fd, read a byte at a time so nothing past it is taken from the pipe."""
    buf = bytearray()
    while True:
        b = os.read(fd, 1)
        if not b:
            return b""
        if b == b"\n":
            return bytes(buf)
        buf += b


FRAME_DIGITS = 12


def read_frame(fd: int) -> bytes:
    """One line of the request, which the worker frames with its length in bytes on a line before
    it: read in large pieces (a byte at a time, the first line's course modules alone took 14 ms),
    and nothing past it taken from the pipe, as what follows is another process's to read. b"" at
    the end of the input; ValueError for a frame that is not one."""
    head = read_line(fd)
    if not head:
        return b""
    if not head.isdigit() or len(head) > FRAME_DIGITS:
        raise ValueError("the request's frame has no length")
    left, chunks = int(head) + 1, []  # the line and its newline
    while left:
        chunk = os.read(fd, min(left, CHUNK))
        if not chunk:
            return b""
        chunks.append(chunk)
        left -= len(chunk)
    line = b"".join(chunks)
    if line[-1:] != b"\n":
        raise ValueError("the request's line is longer than its frame says")
    return line[:-1]
