"""Following a job over its stream ``/ws/jobs/:id`` (lib/logs/protocol.ts), resumed across drops.

:class:`Cursor` is the pure part: fed the stream's messages and log chunks, it answers what to
hand the caller — each log byte once, in order — and where to resume: after a chunk, the
attempt and the bytes received (per rank in a multi-node attempt); after an attempt's end, the
next attempt at offset 0; with ``since``, the event id of the attempt message that set the
position, so the server re-sends no status already seen. It is the same rule as the CLI's
follower (lib/cli/follow-render.ts).

:func:`follow_sync` and :func:`follow_async` run it: connect, read, and on a dropped connection
reconnect with backoff from the cursor's position until the follow ends (the ``end`` message,
or the scoped task/attempt ended) or ``reconnect_timeout`` seconds pass without getting through.
A server that said it is restarting (close 1001/1012, or a ``going_away`` message) is knocked on
at least once a second, so a follow carries on about as soon as the new server listens.
"""
from __future__ import annotations

import asyncio
import json
import struct
import time
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional, Set, Tuple, Union
from urllib.parse import urlencode

from . import _ws
from ._http import backoff_delay, is_refused
from .errors import (
    BadRequestError,
    ForbiddenError,
    JobdeckError,
    LogsRemovedError,
    NotFoundError,
    ProtocolError,
    UnauthorizedError,
    UnreachableError,
)
from .models import LogChunk, StreamEvent

Item = Union[LogChunk, StreamEvent]

#: Send ``{"type":"ping"}`` after this long without a message (s); give up the connection after DEAD_AFTER_S.
PING_AFTER_S = 10.0
DEAD_AFTER_S = 25.0
#: A new connection must bring its hello within this long (s).
HELLO_WITHIN_S = 10.0
#: While the server said it is restarting, the longest wait between tries (s).
RESTART_BACKOFF_MAX_S = 1.0
#: A connection whose hello stood this long counts as a good one even without data (s).
GOOD_CONNECTION_S = 5.0
#: Close codes that mean "the server is restarting" (RFC 6455 going away, service restart).
RESTART_CLOSE_CODES = (1001, 1012)
_TERMINAL = {"SUCCEEDED", "CANCELLED", "FAILED", "FAILED_SETUP", "FAILED_PRECHECKS", "FAILED_NO_RESOURCE", "FAILED_CONTROLLER"}

_HEADER = struct.Struct(">BBHIQ")


def decode_chunk(frame: bytes) -> LogChunk:
    """A binary log frame: version u8, kind u8, task u16, attempt u32, offset u64 (big-endian), then rank u32 for kind 2, then the bytes.

    :raises ProtocolError: a frame too short or of an unknown version or kind.
    """
    if len(frame) < 16:
        raise ProtocolError(f"log frame too short: {len(frame)} bytes")
    version, kind, task, attempt, offset = _HEADER.unpack_from(frame)
    if version != 1 or kind not in (1, 2):
        raise ProtocolError(f"unknown log frame version {version} kind {kind}")
    if kind == 1:
        return LogChunk(task, attempt, offset, bytes(frame[16:]))
    if len(frame) < 20:
        raise ProtocolError(f"log frame too short: {len(frame)} bytes")
    return LogChunk(task, attempt, offset, bytes(frame[20:]), struct.unpack_from(">I", frame, 16)[0])


class Cursor:
    """The position and dedupe of one follow (see the module comment)."""

    def __init__(self, scope_task: Optional[int] = None, scope_attempt: Optional[int] = None, rank: Optional[int] = None, events: bool = False) -> None:
        self.scope_task = scope_task
        self.scope_attempt = scope_attempt
        self.rank = rank
        self.events = events
        self.task, self.attempt, self.offset = (scope_task or 0, scope_attempt or 1, 0)
        self.rank_pos: Dict[int, int] = {}
        self.received: Dict[Tuple[int, int, int], int] = {}
        self.boundary: Optional[int] = None
        self.seen_events: Set[int] = set()
        self.started: Set[Tuple[int, int]] = set()
        self.ended: Dict[Tuple[int, int], str] = {}
        self.open: Set[Tuple[int, int]] = set()
        self.task_status: Dict[int, str] = {}
        self.task_pending: Dict[int, str] = {}
        #: The job as the first hello described it.
        self.job: Optional[Dict[str, Any]] = None
        self.done = False
        #: How the followed thing ended (the job's status, or the scoped task's / attempt's).
        self.status: Optional[str] = None
        self.terminal = False

    def query(self, follow: bool) -> str:
        """The stream query that resumes here."""
        q: List[Tuple[str, Any]] = [("task", self.task), ("attempt", self.attempt), ("offset", self.offset)]
        if self.rank_pos:
            n = max(self.rank_pos) + 1
            q.append(("offsets", ",".join(str(self.offset if k == 0 else self.rank_pos.get(k, 0)) for k in range(n))))
        q.append(("follow", "1" if follow else "0"))
        if self.boundary is not None:
            q.append(("since", self.boundary))
        if self.rank is not None:
            q.append(("rank", self.rank))
        return urlencode(q)

    def _primary(self, rank: int) -> bool:
        return rank == 0 if self.rank is None else rank == self.rank

    def _out_of_scope(self, task: int, attempt: int) -> bool:
        if self.scope_task is None:
            return False
        return task != self.scope_task or (self.scope_attempt is not None and attempt != self.scope_attempt)

    def _log_offset(self, task: int, attempt: int, rank: int) -> int:
        primary = self._primary(rank)
        k = (task, attempt, 0 if primary else rank)
        if k in self.received:
            return self.received[k]
        if self.task == task and self.attempt == attempt:
            return self.offset if primary else self.rank_pos.get(rank, 0)
        return 0

    def chunk(self, c: LogChunk) -> List[Item]:
        """A log chunk: the bytes not handed on before (none, part or all of it)."""
        if self.done or self._out_of_scope(c.task, c.attempt):
            return []
        primary = self._primary(c.rank)
        here = self.task == c.task and self.attempt == c.attempt
        have = self._log_offset(c.task, c.attempt, c.rank)
        end = c.offset + len(c.data)
        if end <= have:
            return []
        if c.offset < have:
            c = LogChunk(c.task, c.attempt, have, c.data[have - c.offset :], c.rank)
        self.received[(c.task, c.attempt, 0 if primary else c.rank)] = end
        if not here:
            self.rank_pos = {}
        if primary:
            self.task, self.attempt, self.offset = c.task, c.attempt, end
        else:
            if not here:
                self.task, self.attempt, self.offset = c.task, c.attempt, self.received.get((c.task, c.attempt, 0), 0)
            self.rank_pos[c.rank] = end
        return [c]

    def message(self, msg: Dict[str, Any]) -> List[Item]:
        """A JSON control message: answers the event to hand on (with ``events``), none for a repeat."""
        if self.done:
            return []
        kind = msg.get("type")
        eid = msg.get("eventId")
        if kind in ("job", "task") and isinstance(eid, int):
            if eid in self.seen_events:
                return []
            self.seen_events.add(eid)
        show = True
        if kind == "hello":
            show = self.job is None
            if show:
                self.job = msg.get("job")
        elif kind == "task":
            show = self._on_task(msg)
        elif kind == "attempt":
            show = self._on_attempt(msg)
        elif kind == "end":
            self._on_end(msg)
        elif kind not in ("job", "times"):
            show = False
        return [StreamEvent(str(kind), msg)] if show and self.events else []

    def _on_task(self, msg: Dict[str, Any]) -> bool:
        task, status = msg.get("task"), str(msg.get("status"))
        if not isinstance(task, int):
            return False
        if self.task_status.get(task) not in _TERMINAL:
            self.task_status[task] = status
        if self.scope_task is None:
            return True
        if task != self.scope_task:
            if task > self.scope_task and status not in ("PENDING", "CANCELLED"):
                self._finish_scope()
            return False
        if status in _TERMINAL and self.scope_attempt is None:
            if any(k[0] == task for k in self.open):
                self.task_pending[task] = status
            else:
                self._finish(status)
        return True

    def _on_attempt(self, msg: Dict[str, Any]) -> bool:
        task, attempt = msg.get("task"), msg.get("attempt")
        if not isinstance(task, int) or not isinstance(attempt, int):
            return False
        k = (task, attempt)
        eid = msg.get("eventId")
        if msg.get("phase") == "start":
            if self._out_of_scope(task, attempt):
                if self.scope_task is not None and (task > self.scope_task or (self.scope_attempt is not None and attempt > self.scope_attempt)):
                    self._finish_scope()
                return False
            if k in self.started or k in self.ended:
                return False
            self.started.add(k)
            self.open.add(k)
            if isinstance(eid, int):
                self.boundary = eid
            here = self.task == task and self.attempt == attempt
            self.received.setdefault((task, attempt, 0), self.offset if here else 0)
            if not here:
                self.rank_pos = {}
            self.task, self.attempt, self.offset = task, attempt, self.received[(task, attempt, 0)]
            return True
        if self._out_of_scope(task, attempt) or k in self.ended:
            return False
        status = str(msg.get("status"))
        self.ended[k] = status
        self.open.discard(k)
        here = self.task == task and self.attempt == attempt
        self.received[(task, attempt, 0)] = max(self.received.get((task, attempt, 0), 0), self.offset if here else 0)
        if self.scope_attempt is None and (task > self.task or (task == self.task and attempt >= self.attempt)):
            self.task, self.attempt, self.offset = task, attempt + 1, 0
            self.rank_pos = {}
            if isinstance(eid, int):
                self.boundary = eid
        if self.scope_attempt is not None and task == self.scope_task and attempt == self.scope_attempt:
            self._finish(status)
        elif task in self.task_pending and not any(o[0] == task for o in self.open):
            self._finish(self.task_pending.pop(task))
        return True

    def _last_end(self, task: int) -> Optional[str]:
        ends = sorted((a, s) for (t, a), s in self.ended.items() if t == task)
        return ends[-1][1] if ends else None

    def _on_end(self, msg: Dict[str, Any]) -> None:
        status = str(msg.get("status"))
        if self.scope_task is None:
            self.done = True
            self.status, self.terminal = status, status in _TERMINAL
            return
        if self.scope_attempt is not None:
            st = self.ended.get((self.scope_task, self.scope_attempt))
        else:
            ts = self.task_status.get(self.scope_task)
            st = ts if ts in _TERMINAL else (self._last_end(self.scope_task) or status) if status in _TERMINAL else None
        if st is not None:
            self._finish(st)
        else:
            self.done = True
            self.status, self.terminal = self.task_status.get(self.scope_task), False

    def _finish_scope(self) -> None:
        if self.scope_attempt is not None:
            st = self.ended.get((self.scope_task or 0, self.scope_attempt))
        else:
            ts = self.task_status.get(self.scope_task or 0)
            st = ts if ts in _TERMINAL else self._last_end(self.scope_task or 0)
        self._finish(st or "SUCCEEDED")

    def _finish(self, status: str) -> None:
        if not self.done:
            self.done, self.status, self.terminal = True, status, True


class _Drop:
    """How a connection ended without finishing the follow."""

    __slots__ = ("reason", "progressed", "opened", "refused", "restarting", "hello")

    def __init__(self, reason: str, *, opened: bool = False, refused: bool = False, restarting: bool = False) -> None:
        self.reason = reason
        self.progressed = False
        self.opened = opened
        self.refused = refused
        self.restarting = restarting
        self.hello = False


class ReconnectPlan:
    """The wait after each dropped connection, and when to give up (the CLI's rhythm, lib/cli/follow.ts)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.failures = 0
        self.outage_since: Optional[float] = None
        self.restarting = False

    def on_drop(self, d: _Drop, now: float) -> Optional[float]:
        """The wait before the next try (s), or None: the outage lasted ``timeout`` — give up."""
        if d.hello:
            self.restarting = False
        if d.restarting:
            self.restarting = True
        if d.progressed:
            self.outage_since, self.failures = None, 0
        if self.outage_since is None:
            self.outage_since = now
        if now - self.outage_since >= self.timeout:
            return None
        if d.progressed and not self.restarting:
            return 0.0
        self.failures += 1
        delay = backoff_delay(self.failures)
        return min(RESTART_BACKOFF_MAX_S, delay) if self.restarting else delay


def _refused_upgrade(job_id: int, status: int, body: str, token_hint: str) -> Union[JobdeckError, _Drop]:
    detail = body.strip()
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and isinstance(parsed.get("detail"), str):
            detail = parsed["detail"]
    except ValueError:
        pass
    if status == 404:
        return NotFoundError(detail or f"job {job_id} not found", status=404)
    if status == 401:
        return UnauthorizedError(f"{token_hint} — the server answered HTTP 401: {detail}", status=401)
    if status == 403:
        return ForbiddenError(f"job {job_id}: {detail}", status=403)
    if status == 400:
        return BadRequestError(detail or "the server refused the stream request", status=400)
    return _Drop(f"HTTP {status}: {detail[:200]}")


class _Told:
    """What the server said (an ``error`` message) before closing."""

    def __init__(self) -> None:
        self.error: Optional[str] = None
        self.message: Optional[str] = None
        self.going_away = False


def _close_verdict(job_id: int, code: int, reason: str, told: _Told, token_hint: str) -> Union[JobdeckError, _Drop]:
    said = told.message or reason
    if code == 4404:
        return NotFoundError(said or f"job {job_id} not found")
    if code == 4401:
        return UnauthorizedError(f"{token_hint} — the server answered close {code}: {said}")
    if code == 4400:
        return ProtocolError(f"the server refused the stream request: {said or 'bad request'}")
    if code == 4410:
        return LogsRemovedError(said or f"job {job_id}: logs removed by the retention policy")
    restarting = told.going_away or code in RESTART_CLOSE_CODES
    return _Drop(told.error or reason or f"closed with code {code}", opened=True, restarting=restarting)


class _Session:
    """The state of one connection that its frames update (shared by the sync and async loops)."""

    def __init__(self, job_id: int, cursor: Cursor, token_hint: str) -> None:
        self.job_id = job_id
        self.cursor = cursor
        self.token_hint = token_hint
        self.told = _Told()
        self.hello = False
        self.progressed = False
        self.opened_at = time.monotonic()
        self.last = self.opened_at

    def frames(self, msgs: List[Tuple[int, bytes]]) -> Tuple[List[Item], Optional[Union[JobdeckError, _Drop]]]:
        """Items for the caller, and how the connection ended (None: it goes on)."""
        out: List[Item] = []
        self.last = time.monotonic()
        for op, payload in msgs:
            if op == _ws.OP_BINARY:
                self.progressed = True
                out += self.cursor.chunk(decode_chunk(payload))
            elif op == _ws.OP_TEXT:
                try:
                    msg = json.loads(payload.decode("utf-8"))
                except ValueError as err:
                    return out, ProtocolError(f"bad message on the job stream: {err}")
                if not isinstance(msg, dict) or msg.get("type") == "pong":
                    continue
                if msg.get("type") == "hello":
                    self.hello = True
                elif msg.get("type") == "error":
                    self.told.error = f"{msg.get('code')}: {msg.get('message')}"
                    self.told.going_away = self.told.going_away or msg.get("code") == "going_away"
                    deleted = msg.get("code") == "deleted"
                    self.told.message = f"job {self.job_id} was deleted while following it" if deleted else str(msg.get("message") or "")
                else:
                    self.progressed = True
                out += self.cursor.message(msg)
            elif op == _ws.OP_CLOSE:
                code, reason = _ws.close_payload(payload)
                return out, None if self.cursor.done else _close_verdict(self.job_id, code, reason, self.told, self.token_hint)
            if self.cursor.done:
                return out, None
        return out, None

    def watchdog(self) -> Optional[_Drop]:
        """A drop when the connection stands silent too long (half-open TCP, a stuck server)."""
        now = time.monotonic()
        if not self.hello and now - self.opened_at > HELLO_WITHIN_S:
            return _Drop(f"no hello from the server within {HELLO_WITHIN_S:.0f} s", opened=True)
        if now - self.last > DEAD_AFTER_S:
            return _Drop(f"no answer from the server for {now - self.last:.0f} s", opened=True)
        return None

    def wants_ping(self) -> bool:
        return time.monotonic() - self.last > PING_AFTER_S

    def finish(self, d: _Drop) -> _Drop:
        d.progressed = self.progressed or (self.hello and time.monotonic() - self.opened_at > GOOD_CONNECTION_S)
        d.hello = self.hello
        d.restarting = d.restarting or self.told.going_away
        return d


class Follow:
    """What one follow needs: where, with which token, how long to keep reconnecting."""

    def __init__(self, base_url: str, headers: Dict[str, str], token_hint: str, job_id: int, cursor: Cursor, follow: bool, reconnect_timeout: float, ssl_context: Any = None) -> None:
        self.base_url = base_url
        self.headers = headers
        self.token_hint = token_hint
        self.job_id = job_id
        self.cursor = cursor
        self.follow = follow
        self.plan = ReconnectPlan(reconnect_timeout)
        self.ssl_context = ssl_context
        self.connections = 0
        self.ever_opened = False

    def url(self) -> str:
        ws = "wss" + self.base_url[5:] if self.base_url.startswith("https") else "ws" + self.base_url[4:]
        return f"{ws}/ws/jobs/{self.job_id}?{self.cursor.query(self.follow)}"

    def after(self, d: _Drop) -> float:
        """The wait before the next connection. :raises UnreachableError: nobody listens, or the outage lasted too long."""
        if d.opened:
            self.ever_opened = True
        if not self.ever_opened and self.connections == 1 and d.refused:
            raise UnreachableError(f"cannot reach jobdeck at {self.base_url} ({d.reason}) — is the server running?")
        wait = self.plan.on_drop(d, time.monotonic())
        if wait is None:
            raise UnreachableError(f"lost the connection to jobdeck at {self.base_url} for {self.plan.timeout:.0f} s ({d.reason}); the job goes on")
        return wait


def _open_failure(err: BaseException, f: Follow) -> Union[JobdeckError, _Drop]:
    if isinstance(err, _ws.HandshakeRefused):
        return _refused_upgrade(f.job_id, err.status, err.body, f.token_hint)
    if isinstance(err, _ws.ProtocolViolation):
        return _Drop(str(err))
    return _Drop(f"{type(err).__name__}: {err}", refused=is_refused(err))


def follow_sync(f: Follow) -> Iterator[Item]:
    """Follows until the end; yields each item once. :raises JobdeckError: a fatal answer (not found, token refused, …), or giving up."""
    while not f.cursor.done:
        f.connections += 1
        try:
            conn = _ws.SyncConnection.open(f.url(), f.headers, HELLO_WITHIN_S, f.ssl_context)
        except (OSError, _ws.HandshakeRefused, _ws.ProtocolViolation) as err:
            verdict = _open_failure(err, f)
            if isinstance(verdict, JobdeckError):
                raise verdict from None
            time.sleep(f.after(verdict))
            continue
        s = _Session(f.job_id, f.cursor, f.token_hint)
        ended: Optional[Union[JobdeckError, _Drop]] = None
        try:
            while not f.cursor.done and ended is None:
                try:
                    msgs = conn.receive(1.0)
                except (OSError, _ws.ProtocolViolation) as err:
                    ended = _Drop(f"{type(err).__name__}: {err}", opened=True)
                    break
                if msgs is None:
                    ended = _Drop("the server closed the connection", opened=True)
                    break
                items, ended = s.frames(msgs) if msgs else ([], s.watchdog())
                yield from items
                if ended is None and not msgs and s.wants_ping():
                    conn.send(_ws.OP_TEXT, b'{"type":"ping"}')
        finally:
            conn.close()
        if isinstance(ended, JobdeckError):
            raise ended
        if ended is not None:
            time.sleep(f.after(s.finish(ended)))


async def follow_async(f: Follow) -> AsyncIterator[Item]:
    """Like :func:`follow_sync`, on asyncio."""
    while not f.cursor.done:
        f.connections += 1
        try:
            conn = await _ws.AsyncConnection.open(f.url(), f.headers, HELLO_WITHIN_S, f.ssl_context)
        except (OSError, asyncio.TimeoutError, _ws.HandshakeRefused, _ws.ProtocolViolation) as err:
            verdict = _open_failure(err, f)
            if isinstance(verdict, JobdeckError):
                raise verdict from None
            await asyncio.sleep(f.after(verdict))
            continue
        s = _Session(f.job_id, f.cursor, f.token_hint)
        ended: Optional[Union[JobdeckError, _Drop]] = None
        try:
            while not f.cursor.done and ended is None:
                try:
                    msgs = await conn.receive(1.0)
                except (OSError, _ws.ProtocolViolation) as err:
                    ended = _Drop(f"{type(err).__name__}: {err}", opened=True)
                    break
                if msgs is None:
                    ended = _Drop("the server closed the connection", opened=True)
                    break
                items, ended = s.frames(msgs) if msgs else ([], s.watchdog())
                for item in items:
                    yield item
                if ended is None and not msgs and s.wants_ping():
                    await conn.send(_ws.OP_TEXT, b'{"type":"ping"}')
        finally:
            await conn.close()
        if isinstance(ended, JobdeckError):
            raise ended
        if ended is not None:
            await asyncio.sleep(f.after(s.finish(ended)))

