"""Reading a verifier command's output in chunks, up to a cap.

A verifier is a program pytest-quest did not write: what it prints is read in
chunks of 64 KB and kept up to a cap, never read whole, so a flood of output
never sits in the judge's memory.
"""

from __future__ import annotations

import os
import threading
from typing import IO

#: The most bytes a verifier command may print (stdout; stderr is cut there silently).
#: A reply in the protocol is a few kilobytes; beyond this the call is an error.
OUTPUT_LIMIT = 1024 * 1024
CHUNK = 64 * 1024


class CappedReader(threading.Thread):
    """Reads a pipe in chunks, keeping at most `cap` bytes; `over` is set when more came."""

    def __init__(self, stream: IO[bytes], cap: int, *, stop_when_over: bool) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.cap = cap
        self.stop_when_over = stop_when_over
        self.chunks: list[bytes] = []
        self.size = 0
        self.over = threading.Event()

    def run(self) -> None:
        fd = self.stream.fileno()
        try:
            while True:
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    return
                if self.size + len(chunk) > self.cap:
                    self.over.set()
                    if self.stop_when_over:
                        return
                    continue  # drained, not kept: the verifier must not block on a full pipe
                self.chunks.append(chunk)
                self.size += len(chunk)
        except OSError:
            return
        finally:
            self.stream.close()

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")


def feed(stdin: IO[bytes], data: bytes) -> None:
    try:
        stdin.write(data)
    except OSError:  # the verifier stopped reading (or ended): its reply says the rest
        pass
    finally:
        try:
            stdin.close()
        except OSError:
            pass


def size_text(limit: int) -> str:
    if limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MB"
    if limit % 1024 == 0:
        return f"{limit // 1024} KB"
    return f"{limit} bytes"
