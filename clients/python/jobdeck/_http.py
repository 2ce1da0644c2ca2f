"""HTTP requests to the jobdeck REST API, with the CLI's retry rules (docs/cli.md, "Dropped connections").

Every request carries ``Authorization: Bearer <token>``. A connection that drops — before the
answer or while its body is read — or an answer 502/503/504 (a proxy, a server stopping) is a
dropped connection; an idempotent request (GET; a submit, which always carries a submission id)
is sent again with backoff (0.25 s doubling to 5 s) until ``retry_timeout`` seconds have passed.
Other requests are never sent twice: the error says the server may or may not have applied it.
A refusal at the very first try fails at once (nobody listens there).
"""
from __future__ import annotations

import errno
import http.client
import json
import socket
import ssl
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, Iterable, Optional, Tuple
from urllib.parse import urlencode

from .errors import JobdeckError, ServerError, UnreachableError, error_for

#: HTTP statuses an idempotent request is retried on.
RETRY_STATUSES = (502, 503, 504)
#: First wait after a failure (s), and the longest (s): lib/cli/backoff.ts's rhythm.
BACKOFF_FIRST_S = 0.25
BACKOFF_MAX_S = 5.0

_UNREACHABLE_ERRNOS = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH}


def backoff_delay(retry: int) -> float:
    """The wait before retry number ``retry`` (1 = the first): 0.25, 0.5, 1, 2, 4, 5, 5… s."""
    return float(min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** max(0, min(retry - 1, 20))))


def is_refused(err: BaseException) -> bool:
    """True when ``err`` means "nobody answers at that address" (refused, no such host, no route)."""
    reason = err.reason if isinstance(err, urllib.error.URLError) else err
    if isinstance(reason, (ConnectionRefusedError, socket.gaierror)):
        return True
    return isinstance(reason, OSError) and getattr(reason, "errno", None) in _UNREACHABLE_ERRNOS


def _cause(err: BaseException) -> str:
    reason = err.reason if isinstance(err, urllib.error.URLError) else err
    return f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__


class Http:
    """The transport of :class:`jobdeck.JobdeckClient` (one per client)."""

    def __init__(
        self,
        url: str,
        token: Optional[str],
        token_hint: str,
        *,
        retry_timeout: float = 60.0,
        timeout: float = 60.0,
        ssl_context: Optional[ssl.SSLContext] = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.token = token
        self.token_hint = token_hint
        self.retry_timeout = retry_timeout
        self.timeout = timeout
        self.ssl_context = ssl_context
        self._sleep = sleep
        self._clock = clock

    def headers(self) -> Dict[str, str]:
        """The headers every request carries (the token)."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Iterable[Tuple[str, Any]]] = None,
        json_body: Any = None,
        data: Optional[bytes] = None,
        content_type: Optional[str] = None,
        what: str = "",
        idempotent: Optional[bool] = None,
    ) -> Tuple[int, Any]:
        """Sends a request; answers (status, parsed JSON body or None for 204).

        :raises UnreachableError: refused at the first try, or dropped and not retried / retries spent.
        :raises JobdeckError: the class the answer's status maps to (errors.error_for).
        """
        target = self.url + path
        pairs = [(k, str(v)) for k, v in (query or []) if v is not None]
        if pairs:
            target += "?" + urlencode(pairs)
        what = what or f"{method} {path}"
        idem = method == "GET" if idempotent is None else idempotent
        body = data
        headers = {"Accept": "application/json", **self.headers()}
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        elif content_type:
            headers["Content-Type"] = content_type
        first_failure: Optional[float] = None
        attempt = 0
        while True:
            attempt += 1
            outcome = self._once(method, target, body, headers, what)
            if not isinstance(outcome, _Failure):
                return outcome
            if outcome.refused and attempt == 1:
                raise UnreachableError(f"cannot reach jobdeck at {self.url} ({outcome.cause}) — is the server running?")
            if not idem:
                if outcome.answer is not None:
                    raise outcome.answer
                raise UnreachableError(
                    f"lost the connection to jobdeck at {self.url} before its answer to {what} ({outcome.cause}); the server may or may not have done it"
                )
            now = self._clock()
            if first_failure is None:
                first_failure = now
            delay = backoff_delay(attempt)
            if now + delay - first_failure > self.retry_timeout:
                if outcome.answer is not None:
                    raise outcome.answer
                raise UnreachableError(
                    f"cannot reach jobdeck at {self.url} ({outcome.cause}) — gave up after {round(now - first_failure)} s of retries"
                )
            self._sleep(delay)

    def _once(self, method: str, target: str, body: Optional[bytes], headers: Dict[str, str], what: str) -> "Tuple[int, Any] | _Failure":
        req = urllib.request.Request(target, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self.ssl_context) as res:
                status = res.status
                text = res.read()
        except urllib.error.HTTPError as err:
            try:
                raw = err.read()
            except (OSError, http.client.HTTPException) as cut:
                return _Failure(False, _cause(cut))
            failure = self._error(err.code, raw, what)
            if err.code in RETRY_STATUSES:
                return _Failure(False, f"HTTP {err.code}", failure)
            raise failure from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
            return _Failure(is_refused(err), _cause(err))
        if status == 204 or not text:
            return status, None
        try:
            return status, json.loads(text)
        except ValueError:
            raise ServerError(f"{method} {target}: the server answered something that is not JSON (is {self.url} a jobdeck server?)", status=status) from None

    def _error(self, status: int, raw: bytes, what: str) -> JobdeckError:
        text = raw.decode("utf-8", "replace")
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        return error_for(status, body, text, what, self.token_hint)


class _Failure:
    """How one try failed: refused (nobody listens) or dropped, and the error answer if one came."""

    __slots__ = ("refused", "cause", "answer")

    def __init__(self, refused: bool, cause: str, answer: Optional[JobdeckError] = None) -> None:
        self.refused = refused
        self.cause = cause
        self.answer = answer
