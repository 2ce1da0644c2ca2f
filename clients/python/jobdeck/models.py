"""What the client answers: statuses, jobs, tasks, attempts, log chunks and stream events.

Each dataclass reads one schema of the OpenAPI document (``GET /api/openapi.json``); each field
names the API field it comes from (``metadata["api"]``), which a test checks against the
document (``_api.py``, generated from it). Times are timezone-aware ``datetime`` (UTC),
durations milliseconds, offsets and sizes bytes. ``raw`` keeps the whole JSON object as the
server sent it, for the fields not modelled here.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Dict, List, Optional, Type, TypeVar


class JobStatus(str, enum.Enum):
    """A job's status (lib/jobs/status.ts). ``PENDING → STARTING → RUNNING → … →`` one terminal status."""

    PENDING = "PENDING"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    RECOVERING = "RECOVERING"
    CANCELLING = "CANCELLING"
    SUCCEEDED = "SUCCEEDED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    FAILED_SETUP = "FAILED_SETUP"
    FAILED_PRECHECKS = "FAILED_PRECHECKS"
    FAILED_NO_RESOURCE = "FAILED_NO_RESOURCE"
    FAILED_CONTROLLER = "FAILED_CONTROLLER"

    def is_terminal(self) -> bool:
        """True for a status nothing leaves (as Ray's ``JobStatus.is_terminal``)."""
        return self not in _LIVE

    def __str__(self) -> str:
        return self.value


_LIVE = {JobStatus.PENDING, JobStatus.STARTING, JobStatus.RUNNING, JobStatus.RECOVERING, JobStatus.CANCELLING}


def _api(name: str, default: Any = None) -> Any:
    return field(default=default, metadata={"api": name})


def parse_time(v: Any) -> Optional[datetime]:
    """An ISO-8601 time of the API as an aware datetime (None for null)."""
    if not isinstance(v, str):
        return None
    return datetime.fromisoformat(v.replace("Z", "+00:00"))


T = TypeVar("T")


def _from_json(cls: Type[T], d: Dict[str, Any], **extra: Any) -> T:
    kw: Dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type, unused-ignore]
        name = f.metadata.get("api")
        if name is None or f.name in extra:
            continue
        v = d.get(name)
        if f.metadata.get("time"):
            v = parse_time(v)
        kw[f.name] = v
    return cls(**kw, **extra)


def _time(name: str) -> Any:
    return field(default=None, metadata={"api": name, "time": True})


@dataclass(frozen=True)
class AttemptInfo:
    """One run of a task (AttemptView)."""

    number: int = _api("number")
    status: str = _api("status")
    #: Why it exists: "first", "restart" (after the task's own failure) or "recovery" (the executor lost the previous one).
    cause: str = _api("cause")
    exit_code: Optional[int] = _api("exitCode")
    reason: Optional[str] = _api("reason")
    started_at: Optional[datetime] = _time("startedAt")
    ended_at: Optional[datetime] = _time("endedAt")
    #: What its log takes on disk (bytes).
    log_bytes: int = _api("logBytes", 0)


@dataclass(frozen=True)
class TaskInfo:
    """One task of a job (TaskSummary; ``attempts`` filled from GET /api/jobs/:id's TaskView)."""

    index: int = _api("index")
    name: Optional[str] = _api("name")
    status: str = _api("status")
    restarts: int = _api("restarts", 0)
    max_restarts: int = _api("maxRestarts", 0)
    recoveries: int = _api("recoveries", 0)
    started_at: Optional[datetime] = _time("startedAt")
    ended_at: Optional[datetime] = _time("endedAt")
    attempts: List[AttemptInfo] = field(default_factory=list)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "TaskInfo":
        """From a TaskSummary or TaskView object."""
        attempts = [_from_json(AttemptInfo, a) for a in d.get("attemptList") or []]
        return _from_json(cls, d, attempts=attempts)


@dataclass(frozen=True)
class JobInfo:
    """A job (JobSummary from the list; JobDetail adds ``metadata``, ``spec_yaml`` and each task's attempts).

    Ray's ``JobDetails``: ``submission_id``, ``status``, ``metadata``, ``start_time``/``end_time``
    (here ``started_at``/``ended_at``), ``message`` (here ``status_reason``).
    """

    id: int = _api("id")
    name: str = _api("name")
    status: JobStatus = _api("status")
    status_reason: Optional[str] = _api("statusReason")
    submission_id: Optional[str] = _api("submissionId")
    submitted_at: Optional[datetime] = _time("submittedAt")
    started_at: Optional[datetime] = _time("startedAt")
    ended_at: Optional[datetime] = _time("endedAt")
    priority: int = _api("priority", 0)
    queue: str = _api("queue", "default")
    owner: Optional[str] = _api("owner")
    #: While PENDING: why it waits and its place in line.
    pending_reason: Optional[str] = _api("pendingReason")
    task_count: int = _api("taskCount", 0)
    current_task: int = _api("currentTask", 0)
    restart_count: int = _api("restartCount", 0)
    recovery_count: int = _api("recoveryCount", 0)
    tasks: List[TaskInfo] = field(default_factory=list)
    #: Client metadata given at submit (JobDetail only; None from a list).
    metadata: Any = None
    #: The YAML as submitted, secrets masked (JobDetail only).
    spec_yaml: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "JobInfo":
        """From a JobSummary or JobDetail object."""
        return _from_json(
            cls,
            d,
            status=JobStatus(d["status"]),
            tasks=[TaskInfo.from_json(t) for t in d.get("tasks") or []],
            metadata=d.get("metadata"),
            spec_yaml=d.get("specYaml"),
            raw=d,
        )


#: The JobDetail-only fields JobInfo reads (checked against the document like the others).
DETAIL_FIELDS = ("metadata", "specYaml")


@dataclass(frozen=True)
class LogChunk:
    """Bytes ``[offset, offset + len(data))`` of one attempt's log (of rank ``rank`` in a multi-node attempt)."""

    task: int
    attempt: int
    offset: int
    data: bytes
    rank: int = 0

    @property
    def text(self) -> str:
        """``data`` decoded as UTF-8 (a character split across two chunks shows as U+FFFD; use ``data`` for exact bytes)."""
        return self.data.decode("utf-8", "replace")


@dataclass(frozen=True)
class StreamEvent:
    """A control message of the job stream (lib/logs/protocol.ts): ``type`` is hello, job, task, attempt, times or end; ``message`` the JSON object."""

    type: str
    message: Dict[str, Any]
