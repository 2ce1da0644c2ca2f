"""The client side of RFC 6455 WebSockets that jobdeck's job stream needs, on the standard library.

The standard library has no WebSocket client, and the stream is the only way to read a log
byte-exactly while it grows (the REST range read answers UTF-8 text). Only what a client of
``/ws/jobs/:id`` uses is here: the opening handshake (with ``Authorization``), unmasked server
frames (text, binary, continuation, ping, pong, close) and masked client frames (text, pong,
close). No extensions are offered, so the server sends no compressed frames (docs/design.md §8).

:class:`FrameParser` is pure (bytes in, messages out); :class:`SyncConnection` runs it over a
``socket`` (``ssl`` for ``wss://``), :class:`AsyncConnection` over asyncio streams.
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import socket
import ssl
import struct
from typing import Dict, List, Optional, Tuple
from urllib.parse import urlsplit

OP_CONT = 0x0
OP_TEXT = 0x1
OP_BINARY = 0x2
OP_CLOSE = 0x8
OP_PING = 0x9
OP_PONG = 0xA

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#: A log frame carries at most 256 KiB (lib/logs/protocol.ts LOG_CHUNK_BYTES); a message past this is a broken peer.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: Most bytes of a refused upgrade's answer kept for its error message.
_MAX_REFUSAL_BODY = 4000


class HandshakeRefused(Exception):
    """The server answered the upgrade with an HTTP status other than 101 (``status``, ``body``)."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body


class ProtocolViolation(Exception):
    """A frame that breaks RFC 6455 (a masked server frame, a fragmented control frame, …)."""


class FrameParser:
    """Turns the bytes a server sends into whole messages: ``(opcode, payload)`` tuples.

    Text and binary messages are reassembled from their fragments; ping, pong and close come
    as they arrive (they may sit between fragments).
    """

    def __init__(self, max_message: int = MAX_MESSAGE_BYTES) -> None:
        self._buf = bytearray()
        self._max = max_message
        self._frag_op: Optional[int] = None
        self._frag = bytearray()

    def feed(self, data: bytes) -> List[Tuple[int, bytes]]:
        """Adds received bytes; answers the messages they complete, in order.

        :raises ProtocolViolation: for a frame no server may send.
        """
        self._buf += data
        out: List[Tuple[int, bytes]] = []
        while True:
            frame = self._next_frame()
            if frame is None:
                return out
            fin, op, payload = frame
            if op >= 0x8:
                if not fin or len(payload) > 125:
                    raise ProtocolViolation("a control frame must be whole and at most 125 bytes")
                out.append((op, payload))
            elif op == OP_CONT:
                if self._frag_op is None:
                    raise ProtocolViolation("a continuation frame with no message to continue")
                self._frag += payload
                if len(self._frag) > self._max:
                    raise ProtocolViolation(f"a message over {self._max} bytes")
                if fin:
                    out.append((self._frag_op, bytes(self._frag)))
                    self._frag_op, self._frag = None, bytearray()
            elif op in (OP_TEXT, OP_BINARY):
                if self._frag_op is not None:
                    raise ProtocolViolation("a new message inside a fragmented one")
                if fin:
                    out.append((op, payload))
                else:
                    self._frag_op, self._frag = op, bytearray(payload)
            else:
                raise ProtocolViolation(f"unknown opcode {op}")

    def _next_frame(self) -> Optional[Tuple[bool, int, bytes]]:
        b = self._buf
        if len(b) < 2:
            return None
        fin = bool(b[0] & 0x80)
        if b[0] & 0x70:
            raise ProtocolViolation("reserved bits set (no extension was agreed)")
        op = b[0] & 0x0F
        if b[1] & 0x80:
            raise ProtocolViolation("a masked frame from the server")
        n = b[1] & 0x7F
        at = 2
        if n == 126:
            if len(b) < 4:
                return None
            n = struct.unpack_from(">H", b, 2)[0]
            at = 4
        elif n == 127:
            if len(b) < 10:
                return None
            n = struct.unpack_from(">Q", b, 2)[0]
            at = 10
        if n > self._max:
            raise ProtocolViolation(f"a frame of {n} bytes")
        if len(b) < at + n:
            return None
        payload = bytes(b[at : at + n])
        del b[: at + n]
        return fin, op, payload


def encode_frame(op: int, payload: bytes, mask: Optional[bytes] = None) -> bytes:
    """One whole client frame: FIN set, masked with ``mask`` (4 random bytes when None)."""
    key = mask if mask is not None else os.urandom(4)
    n = len(payload)
    if n < 126:
        head = struct.pack(">BB", 0x80 | op, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack(">BBH", 0x80 | op, 0x80 | 126, n)
    else:
        head = struct.pack(">BBQ", 0x80 | op, 0x80 | 127, n)
    body = bytes(c ^ key[i & 3] for i, c in enumerate(payload))
    return head + key + body


def close_payload(payload: bytes) -> Tuple[int, str]:
    """The (code, reason) of a close frame's payload (1005 when it has none)."""
    if len(payload) < 2:
        return 1005, ""
    return struct.unpack(">H", payload[:2])[0], payload[2:].decode("utf-8", "replace")


def _accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + _GUID).digest()).decode("ascii")


def _request(url: str, headers: Dict[str, str]) -> Tuple[str, int, bool, bytes, str]:
    """(host, port, tls, request bytes, key) of the opening handshake of ``url`` (ws:// or wss://)."""
    u = urlsplit(url)
    tls = u.scheme == "wss"
    host = u.hostname or "127.0.0.1"
    port = u.port or (443 if tls else 80)
    path = (u.path or "/") + (f"?{u.query}" if u.query else "")
    key = base64.b64encode(os.urandom(16)).decode("ascii")
    host_header = f"[{host}]" if ":" in host else host
    if u.port:
        host_header += f":{u.port}"
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: {host_header}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return host, port, tls, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"), key


def _parse_answer(head: bytes, key: str) -> Tuple[int, Dict[str, str]]:
    """The status and headers of the handshake answer; raises unless it is a valid 101."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise ProtocolViolation(f"not an HTTP answer: {lines[0][:80]!r}")
    status = int(parts[1])
    headers: Dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    if status == 101 and headers.get("sec-websocket-accept") != _accept_key(key):
        raise ProtocolViolation("the server's Sec-WebSocket-Accept does not match the key")
    return status, headers


class SyncConnection:
    """One WebSocket connection over a blocking socket."""

    def __init__(self, sock: socket.socket, leftover: bytes) -> None:
        self._sock = sock
        self._parser = FrameParser()
        self._pending = self._parser.feed(leftover) if leftover else []

    @classmethod
    def open(cls, url: str, headers: Dict[str, str], timeout: float, ssl_context: Optional[ssl.SSLContext] = None) -> "SyncConnection":
        """Connects and completes the handshake within ``timeout`` seconds.

        :raises OSError: the connection failed (``ConnectionRefusedError`` when nobody listens).
        :raises HandshakeRefused: the server answered another status than 101.
        """
        host, port, tls, request, key = _request(url, headers)
        sock = socket.create_connection((host, port), timeout=timeout)
        try:
            if tls:
                sock = (ssl_context or ssl.create_default_context()).wrap_socket(sock, server_hostname=host)
            sock.sendall(request)
            buf = b""
            while b"\r\n\r\n" not in buf:
                more = sock.recv(4096)
                if not more:
                    raise ConnectionResetError("the server closed the connection during the handshake")
                buf += more
                if len(buf) > 65536:
                    raise ProtocolViolation("handshake answer too long")
            head, rest = buf.split(b"\r\n\r\n", 1)
            status, hdrs = _parse_answer(head, key)
            if status != 101:
                want = min(int(hdrs.get("content-length", "0") or 0), _MAX_REFUSAL_BODY)
                while len(rest) < want:
                    more = sock.recv(4096)
                    if not more:
                        break
                    rest += more
                raise HandshakeRefused(status, rest[:want].decode("utf-8", "replace"))
            return cls(sock, rest)
        except BaseException:
            sock.close()
            raise

    def receive(self, timeout: float) -> Optional[List[Tuple[int, bytes]]]:
        """The next messages, waiting at most ``timeout`` s: [] on a quiet timeout, None when the peer closed the TCP stream.

        Pings are answered here (and also returned).
        """
        if self._pending:
            out, self._pending = self._pending, []
            return out
        self._sock.settimeout(timeout)
        try:
            data = self._sock.recv(262144)
        except socket.timeout:
            return []
        if not data:
            return None
        msgs = self._parser.feed(data)
        for op, payload in msgs:
            if op == OP_PING:
                self.send(OP_PONG, payload)
        return msgs

    def send(self, op: int, payload: bytes) -> None:
        """Sends one frame (a text ping, a pong, a close)."""
        self._sock.settimeout(10)
        self._sock.sendall(encode_frame(op, payload))

    def close(self, code: int = 1000) -> None:
        """Says goodbye (best effort) and closes the socket."""
        try:
            self.send(OP_CLOSE, struct.pack(">H", code))
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass


class AsyncConnection:
    """One WebSocket connection over asyncio streams (the same frames as :class:`SyncConnection`)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, leftover: bytes) -> None:
        self._reader = reader
        self._writer = writer
        self._parser = FrameParser()
        self._pending = self._parser.feed(leftover) if leftover else []

    @classmethod
    async def open(cls, url: str, headers: Dict[str, str], timeout: float, ssl_context: Optional[ssl.SSLContext] = None) -> "AsyncConnection":
        """Like :meth:`SyncConnection.open`, awaited."""
        host, port, tls, request, key = _request(url, headers)
        ctx = (ssl_context or ssl.create_default_context()) if tls else None
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, ssl=ctx, limit=1 << 20), timeout)
        try:
            writer.write(request)
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
            status, hdrs = _parse_answer(head[:-4], key)
            if status != 101:
                want = min(int(hdrs.get("content-length", "0") or 0), _MAX_REFUSAL_BODY)
                body = b""
                try:
                    body = await asyncio.wait_for(reader.readexactly(want), timeout)
                except (asyncio.IncompleteReadError, asyncio.TimeoutError):
                    pass
                raise HandshakeRefused(status, body.decode("utf-8", "replace"))
            return cls(reader, writer, b"")
        except asyncio.IncompleteReadError as err:
            writer.close()
            raise ConnectionResetError("the server closed the connection during the handshake") from err
        except BaseException:
            writer.close()
            raise

    async def receive(self, timeout: float) -> Optional[List[Tuple[int, bytes]]]:
        """Like :meth:`SyncConnection.receive`, awaited."""
        if self._pending:
            out, self._pending = self._pending, []
            return out
        try:
            data = await asyncio.wait_for(self._reader.read(262144), timeout)
        except asyncio.TimeoutError:
            return []
        if not data:
            return None
        msgs = self._parser.feed(data)
        for op, payload in msgs:
            if op == OP_PING:
                await self.send(OP_PONG, payload)
        return msgs

    async def send(self, op: int, payload: bytes) -> None:
        """Sends one frame."""
        self._writer.write(encode_frame(op, payload))
        await asyncio.wait_for(self._writer.drain(), 10)

    async def close(self, code: int = 1000) -> None:
        """Says goodbye (best effort) and closes the stream."""
        try:
            self._writer.write(encode_frame(OP_CLOSE, struct.pack(">H", code)))
            await asyncio.wait_for(self._writer.drain(), 2)
        except (OSError, asyncio.TimeoutError):
            pass
        self._writer.close()
        try:
            await asyncio.wait_for(self._writer.wait_closed(), 2)
        except (OSError, asyncio.TimeoutError):
            pass
