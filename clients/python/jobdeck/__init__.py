"""jobdeck: submit, watch and tail jobdeck jobs from Python (standard library only; docs/client-python.md).

    from jobdeck import JobdeckClient
    client = JobdeckClient()                       # JOBDECK_URL / JOBDECK_TOKEN, or the local server
    job = client.submit(cmd="python train.py", name="train")
    for chunk in client.tail(job):                 # or: async for chunk in client.tail(job)
        print(chunk.text, end="")
    print(client.wait(job))                        # JobStatus.SUCCEEDED
"""
from .client import DEFAULT_RECONNECT_TIMEOUT, JobdeckClient, LogTail, SpecWarning
from .errors import (
    BadRequestError,
    ForbiddenError,
    JobdeckError,
    JobdeckTimeoutError,
    LogsRemovedError,
    NotFoundError,
    ProtocolError,
    QuotaExceededError,
    RefusedError,
    ServerError,
    SpecError,
    SpecIssue,
    UnauthorizedError,
    UnreachableError,
)
from .models import AttemptInfo, JobInfo, JobStatus, LogChunk, StreamEvent, TaskInfo

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_RECONNECT_TIMEOUT",
    "AttemptInfo",
    "BadRequestError",
    "ForbiddenError",
    "JobInfo",
    "JobStatus",
    "JobdeckClient",
    "JobdeckError",
    "JobdeckTimeoutError",
    "LogChunk",
    "LogTail",
    "LogsRemovedError",
    "NotFoundError",
    "ProtocolError",
    "QuotaExceededError",
    "RefusedError",
    "ServerError",
    "SpecError",
    "SpecIssue",
    "SpecWarning",
    "StreamEvent",
    "TaskInfo",
    "UnauthorizedError",
    "UnreachableError",
]
