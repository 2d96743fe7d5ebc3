"""The wire between the grader and its worker: JSON headers and raw byte blobs, never pickle.

A message is a frame holding a JSON object, followed by ``header["blobs"]`` frames of raw
bytes. A frame is an 8-byte big-endian length and its payload. Nothing the worker sends is
ever executed by the grader: it is parsed as JSON or copied as bytes. What a header may hold,
request by request and reply by reply, is :mod:`grader.channel.wire`.
"""
from __future__ import annotations

import json
import os
import select
import struct
import time

_LEN = struct.Struct(">Q")
# What one message may carry: a worker is untrusted, and a frame it claims is read into memory.
# A header frame holds MAX_FRAME at most, a blob as much as its message. A request whose reply
# must carry more says so (``most``: a --bench size's outputs, 2 GiB of puzzle 23's fp32
# logits' gradient at 4096 x 128256).
MAX_FRAME = 1 << 30
MAX_MESSAGE = 1 << 31
MAX_BLOBS = 4096
# What the worker reads from the grader, which it trusts: a stream past this is corrupt.
FROM_GRADER = 1 << 36


class ChannelClosed(EOFError):
    """The other side went away (for a worker: it crashed or exited)."""


class ChannelTimeout(TimeoutError):
    """No full message arrived in time."""


class MessageTooLarge(ValueError):
    """A message the reader would refuse as corrupt: nothing of it was written."""


def write_message(fd: int, header: dict, blobs: list[bytes] = (), most: int = MAX_MESSAGE) -> None:
    """One message; ``most``: the bytes its blobs may hold in all, as the reader was told."""
    header = {**header, "blobs": len(blobs)}
    sizes = [memoryview(b).nbytes for b in blobs]
    if len(blobs) > MAX_BLOBS or sum(sizes) > most:
        raise MessageTooLarge(f"{len(blobs)} blobs of {sum(sizes)} bytes, the largest {max(sizes)}: past the "
                              f"channel's limits ({MAX_BLOBS} blobs, {most} bytes in all)")
    payloads = [json.dumps(header).encode()] + [bytes(b) for b in blobs]
    data = b"".join(_LEN.pack(len(p)) + p for p in payloads)
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class Reader:
    """Reads messages from a file descriptor, with an optional deadline per message."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def _fill(self, need: int, deadline: float | None) -> None:
        while len(self.buffer) < need:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ChannelTimeout()
                ready, _, _ = select.select([self.fd], [], [], left)
                if not ready:
                    raise ChannelTimeout()
            chunk = os.read(self.fd, max(65536, need - len(self.buffer)))
            if not chunk:
                raise ChannelClosed()
            self.buffer += chunk

    def _frame(self, deadline: float | None, most: int = MAX_FRAME) -> bytes:
        self._fill(_LEN.size, deadline)
        (length,) = _LEN.unpack_from(self.buffer)
        if length > most:
            raise ChannelClosed(f"frame of {length} bytes: the stream is corrupt")
        self._fill(_LEN.size + length, deadline)
        payload = bytes(self.buffer[_LEN.size:_LEN.size + length])
        del self.buffer[:_LEN.size + length]
        return payload

    def read_message(self, timeout: float | None = None, most: int = MAX_MESSAGE) -> tuple[dict, list[bytes]]:
        """One message; ``most``: the bytes its blobs may hold in all."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            header = json.loads(self._frame(deadline))
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: "[[[[..."
            raise ChannelClosed(f"unreadable message: {exc}") from exc
        if not isinstance(header, dict) or not isinstance(header.get("blobs"), int):
            raise ChannelClosed("message without a header")
        if not 0 <= header["blobs"] <= MAX_BLOBS:
            raise ChannelClosed(f"message with {header['blobs']} blobs: the stream is corrupt")
        blobs, total = [], 0
        for _ in range(header["blobs"]):
            blobs.append(self._frame(deadline, most))
            total += len(blobs[-1])
            if total > most:
                raise ChannelClosed(f"message of more than {most} bytes: the stream is corrupt")
        return header, blobs
