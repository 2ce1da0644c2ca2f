"""The exceptions of the jobdeck client, one per kind of answer the API gives.

Every error is ``application/problem+json`` on the server (RFC 9457: ``title``, ``status``,
``detail``; a spec error adds ``issues`` with file, line, column and key path). Each HTTP status
maps to one class here, so a caller catches what it means — ``except NotFoundError`` — instead
of reading status codes. The classes mirror the CLI's exit codes (docs/cli.md): not found (4),
cannot reach (6), token refused (7), refused (10), bad input / spec (2).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional


@dataclass(frozen=True)
class SpecIssue:
    """One problem (or warning) in a job spec: where (file, 1-based line and column, key path) and what."""

    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line is not None else (self.file or "")
        key = f" {self.path}" if self.path else ""
        return f"{where}{key}: {self.message}".lstrip()

    @classmethod
    def from_json(cls, raw: Any) -> "SpecIssue":
        """From one entry of a problem's ``issues`` (or a submit's ``warnings``)."""
        d = raw if isinstance(raw, dict) else {}

        def text(key: str) -> Optional[str]:
            v = d.get(key)
            return v if isinstance(v, str) else None

        def num(key: str) -> Optional[int]:
            v = d.get(key)
            return v if isinstance(v, int) else None

        return cls(file=text("file"), line=num("line"), column=num("column"), path=text("path") or "", message=text("message") or "invalid")


class JobdeckError(Exception):
    """Base of every error this client raises. ``status`` is the HTTP status (None when none came)."""

    def __init__(self, message: str, *, status: Optional[int] = None, title: Optional[str] = None, detail: Optional[str] = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.detail = detail
        #: The parsed problem+json body, when the server sent one.
        self.body = body


class UnreachableError(JobdeckError, ConnectionError):
    """Nobody answers at the URL, or the connection was lost and retries ran out."""


class UnauthorizedError(JobdeckError):
    """The server refused the token (401): missing, wrong, revoked or expired."""


class ForbiddenError(JobdeckError):
    """The token is valid but may not do this (403): a viewer submitting, a member cancelling another's job."""


class NotFoundError(JobdeckError, LookupError):
    """No such job, task, attempt or queue (404), or a job deleted while it was followed."""


class LogsRemovedError(NotFoundError):
    """The retention policy removed the job's logs (docs/design.md "Retention")."""


class RefusedError(JobdeckError):
    """The server refused the operation for the job as it is (409): cancel of a finished job,
    delete of a running one, a submission id reused with another spec."""


class QuotaExceededError(RefusedError):
    """The caller's pending-jobs quota is reached (429)."""


class BadRequestError(JobdeckError, ValueError):
    """Bad input (400, 413, 415, 422): the ``detail`` says what and where."""


class SpecError(BadRequestError):
    """An invalid job spec: ``issues`` holds every problem with its file, line and key path.

    ``str(err)`` lists them one per line, e.g.
    ``job.yaml:8 task[0].job_recovery.max_restarts_on_errors: expected an integer ≥ 0, got "two"``.
    """

    def __init__(self, message: str, issues: List[SpecIssue], **kw: Any) -> None:
        super().__init__(message, **kw)
        self.issues = issues


class ServerError(JobdeckError):
    """The server failed (5xx), or answered something that is not jobdeck's API."""


class ProtocolError(ServerError):
    """The job stream sent something this client cannot read."""


class JobdeckTimeoutError(JobdeckError, TimeoutError):
    """:meth:`JobdeckClient.wait` ran out of time; the job goes on."""


def error_for(status: int, body: Any, text: str, what: str, token_hint: str = "") -> JobdeckError:
    """The exception for a non-2xx answer: its class from ``status``, its message from the
    problem's ``detail`` (a spec error lists its issues)."""
    problem = body if isinstance(body, dict) else {}
    detail = problem.get("detail") if isinstance(problem.get("detail"), str) else None
    title = problem.get("title") if isinstance(problem.get("title"), str) else None
    said = detail or title or (text.strip()[:500] if text.strip() else f"HTTP {status}")
    kw: Any = {"status": status, "title": title, "detail": detail, "body": body}
    if status in (400, 413, 415, 422):
        raw = problem.get("issues")
        issues = [SpecIssue.from_json(i) for i in raw if isinstance(i, dict) and isinstance(i.get("file"), str)] if isinstance(raw, list) else []
        if issues:
            n = len(issues)
            lines = "\n".join(f"  {i}" for i in issues)
            return SpecError(f"invalid job spec ({n} problem{'s' if n > 1 else ''}):\n{lines}", issues, **kw)
        return BadRequestError(f"{what}: {said}", **kw)
    if status == 401:
        return UnauthorizedError(f"{token_hint or 'token refused'} — the server answered HTTP 401: {said}", **kw)
    if status == 403:
        return ForbiddenError(f"{what}: {said}", **kw)
    if status == 404:
        return NotFoundError(said, **kw)
    if status == 409:
        return RefusedError(said, **kw)
    if status == 429:
        return QuotaExceededError(said, **kw)
    return ServerError(f"{what}: HTTP {status}: {said}", **kw)
