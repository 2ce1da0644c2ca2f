"""``JobdeckClient``: submit, watch, tail and manage jobdeck jobs from Python (docs/client-python.md).

Names follow Ray's ``JobSubmissionClient`` where they mean the same thing (``submission_id``,
``metadata``, ``JobStatus.is_terminal``; ``submit``/``status``/``info``/``list``/``cancel``/
``delete``/``logs``/``tail`` for ``submit_job``/``get_job_status``/``get_job_info``/
``list_jobs``/``stop_job``/``delete_job``/``get_job_logs``/``tail_job_logs``).
"""
from __future__ import annotations

import asyncio
import os
import time
import uuid
import warnings
from typing import Any, AsyncIterator, Callable, Dict, Generic, Iterator, List, Literal, Mapping, Optional, Sequence, TypeVar, Union, cast, overload

from . import _api
from ._config import resolve_token, resolve_url
from ._follow import Cursor, Follow, follow_async, follow_sync
from ._http import Http
from ._pack import local_file_mounts, pack_file, pack_folder, relative_workdir, upload_cap
from .errors import BadRequestError, JobdeckTimeoutError, SpecIssue
from .models import JobInfo, JobStatus, LogChunk, StreamEvent

#: How long a follow keeps reconnecting to a lost server (s), as the CLI: 5 minutes.
DEFAULT_RECONNECT_TIMEOUT = 300.0
#: The task file a folder given as the spec holds (SkyPilot's name, as ``jobdeck launch DIR``).
FOLDER_TASK_FILE = "task.yaml"
#: Most bytes of YAML read from a spec file (the server caps bodies too).
MAX_SPEC_BYTES = 1024 * 1024

Spec = Union[str, Dict[str, Any], "os.PathLike[str]"]


class SpecWarning(UserWarning):
    """A key of the spec accepted and not acted on (``warnings.warn`` at submit; docs/spec.md "SkyPilot keys")."""


def _submit_body(
    spec: "Optional[Union[str, Dict[str, Any]]]",
    cmd: Optional[str],
    *,
    name: Optional[str] = None,
    envs: Optional[Mapping[str, str]] = None,
    secrets: Optional[Mapping[str, str]] = None,
    priority: Optional[int] = None,
    queue: Optional[str] = None,
    metadata: Optional[Mapping[str, Any]] = None,
    submission_id: Optional[str] = None,
) -> Dict[str, Any]:
    """The JSON body of POST /api/jobs (SubmitRequest) for YAML text, a spec dict or a command."""
    body: Dict[str, Any] = {"origin": "api", "submissionId": submission_id or f"jobdeck-py-{uuid.uuid4()}"}
    if cmd is not None:
        body["cmd"] = cmd
    elif isinstance(spec, dict):
        body["spec"] = spec
    elif isinstance(spec, str):
        body["yaml"] = spec
    else:
        raise BadRequestError(f"spec must be YAML text, a dict or a path, got {type(spec).__name__}")
    for key, value in (("name", name), ("envs", dict(envs) if envs else None), ("secrets", dict(secrets) if secrets else None), ("priority", priority), ("queue", queue), ("metadata", dict(metadata) if metadata else None)):
        if value is not None:
            body[key] = value
    return body


def _list_query(
    status: "Optional[Union[str, Sequence[str]]]",
    name: Optional[str],
    queue: Optional[str],
    owner: Optional[str],
    metadata: Optional[Mapping[str, str]],
    submitted_after: Optional[str],
    submitted_before: Optional[str],
    sort: Optional[str],
) -> List[Any]:
    """The filter of GET /api/jobs as query pairs (a repeated name for each status and metadata pair)."""
    statuses = [status] if isinstance(status, str) else list(status or [])
    q: List[Any] = [("status", str(s)) for s in statuses]
    q += [("q", name), ("queue", queue), ("owner", owner), ("submittedAfter", submitted_after), ("submittedBefore", submitted_before), ("sort", sort)]
    q += [("metadata", f"{k}:{v}") for k, v in (metadata or {}).items()]
    return [(k, v) for k, v in q if v is not None]


def _path(op: str, **params: Any) -> str:
    return _api.OPERATIONS[op][1].format(**params)


#: What a LogTail yields: LogChunk, or with ``events=True`` LogChunk and StreamEvent.
I = TypeVar("I")


class LogTail(Generic[I]):
    """The logs of a job, followed: iterate it (``for``) or ``async for`` it.

    Yields :class:`LogChunk` items — each byte of each attempt's log once, task by task and
    attempt by attempt, in order — and, with ``events=True``, :class:`StreamEvent` items for the
    job's, tasks' and attempts' changes. Ends when the job ends (or the task / attempt asked
    for); with ``follow=False``, once what exists now was read. Survives dropped connections
    and server restarts: it reconnects and resumes where the bytes it yielded end.
    After the end, ``status`` is how the followed thing ended.
    """

    def __init__(self, make: Callable[[], Follow]) -> None:
        self._make = make
        self._follow: Optional[Follow] = None

    def _start(self) -> Follow:
        if self._follow is not None:
            raise RuntimeError("a LogTail is iterated once; call tail() again")
        self._follow = self._make()
        return self._follow

    def __iter__(self) -> Iterator[I]:
        return cast(Iterator[I], follow_sync(self._start()))

    def __aiter__(self) -> AsyncIterator[I]:
        return cast(AsyncIterator[I], follow_async(self._start()))

    @property
    def status(self) -> Optional[JobStatus]:
        """How the job ended (or the scoped task / attempt, as a job status name); None before the end."""
        c = self._follow.cursor if self._follow else None
        return JobStatus(c.status) if c and c.status and c.status in JobStatus.__members__ else None

    @property
    def connections(self) -> int:
        """How many connections the follow took (1 when none dropped)."""
        return self._follow.connections if self._follow else 0


class JobdeckClient:
    """A client of one jobdeck server.

    :param url: the server; default ``JOBDECK_URL``, else the local server (``http://$HOST:$PORT``).
    :param token: the API token; default ``JOBDECK_TOKEN``, else ``$JOBDECK_HOME/token``.
    :param retry_timeout: keep retrying an idempotent request this long after its first failure (s).
    :param reconnect_timeout: keep reconnecting a follow (``tail``) this long (s).
    :param timeout: socket timeout of one request (s).
    :raises BadRequestError: ``url`` (or JOBDECK_URL) is not an http(s) URL.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        retry_timeout: float = 60.0,
        reconnect_timeout: float = DEFAULT_RECONNECT_TIMEOUT,
        timeout: float = 60.0,
        env: Optional[Mapping[str, str]] = None,
        ssl_context: Any = None,
    ) -> None:
        self._env = os.environ if env is None else env
        self.url = resolve_url(url, self._env)
        tok, hint = resolve_token(token, self._env)
        self.reconnect_timeout = reconnect_timeout
        self._http = Http(self.url, tok, hint, retry_timeout=retry_timeout, timeout=timeout, ssl_context=ssl_context)

    def __repr__(self) -> str:
        return f"JobdeckClient({self.url!r})"

    # ─── submit ────────────────────────────────────────────────────────────────────────────

    def submit(
        self,
        spec: Optional[Spec] = None,
        *,
        cmd: Optional[str] = None,
        name: Optional[str] = None,
        envs: Optional[Mapping[str, str]] = None,
        secrets: Optional[Mapping[str, str]] = None,
        priority: Optional[int] = None,
        queue: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        submission_id: Optional[str] = None,
        workdir: "Optional[Union[str, os.PathLike[str]]]" = None,
    ) -> int:
        """Submits a job; answers its id.

        :param spec: the job: YAML text (``str``), a spec as a ``dict`` (the YAML's keys), or a
            path (``pathlib.Path``) to a YAML file or to a folder holding ``task.yaml``. A file's
            relative ``workdir`` and local ``file_mounts`` are packed and uploaded as
            ``jobdeck launch`` does; its name is used in spec errors (``job.yaml:8 …``).
        :param cmd: instead of ``spec``, one command (Ray's ``entrypoint``).
        :param submission_id: idempotency key (Ray's); a repeat with the same spec answers the
            same job. Default: a fresh one, so a submit retried after a dropped connection never
            makes two jobs.
        :param workdir: a local folder to upload as the job's working folder (Ray's
            ``runtime_env={"working_dir": …}``); each attempt runs in a fresh copy of it.
        :raises SpecError: the spec is invalid (``issues`` with file:line and key path).
        :raises BadRequestError: bad arguments, a folder that cannot be packed.
        Spec warnings (keys accepted, not acted on) are issued as :class:`SpecWarning`.
        """
        if (spec is None) == (cmd is None):
            raise BadRequestError("give a spec or cmd=, not both and not neither")
        base: Optional[str] = None
        if isinstance(spec, os.PathLike):
            yaml, filename, base = self._read_spec(os.fspath(spec))
            spec = yaml
        else:
            filename = None
            if isinstance(spec, str) and "\n" not in spec and ":" not in spec and spec.strip().endswith((".yaml", ".yml")):
                raise BadRequestError(f"spec {spec!r} looks like a file name, and a str is YAML text: pass pathlib.Path({spec!r}) to submit the file")
        body = _submit_body(spec, cmd, name=name, envs=envs, secrets=secrets, priority=priority, queue=queue, metadata=metadata, submission_id=submission_id)
        if filename:
            body["filename"] = filename
        if workdir is not None:
            body["workdirUpload"] = self._upload(pack_folder(os.path.abspath(os.fspath(workdir)), upload_cap(self._env), f"workdir {os.fspath(workdir)}")[0])
        elif base is not None:
            wd = relative_workdir(body["yaml"], base)
            if wd:
                body["workdirUpload"] = self._upload(pack_folder(wd[0], upload_cap(self._env), f"workdir {wd[1]}")[0])
        if base is not None:
            mounts = {}
            for target, source in local_file_mounts(body["yaml"], base).items():
                label = f"file_mounts {target}"
                kind = "dir" if os.path.isdir(source) else "file"
                packed = pack_folder(source, upload_cap(self._env), label) if kind == "dir" else pack_file(source, upload_cap(self._env), label)
                mounts[target] = {"hash": self._upload(packed[0]), "kind": kind}
            if mounts:
                body["fileMountUploads"] = mounts
        _, res = self._http.request(*_api.OPERATIONS["submitJob"], json_body=body, what="submit", idempotent=True)
        for w in res.get("warnings") or []:
            warnings.warn(str(SpecIssue.from_json(w)), SpecWarning, stacklevel=2)
        return int(res["id"])

    def _read_spec(self, given: str) -> "tuple[str, str, str]":
        path = given
        if os.path.isdir(path):
            path = os.path.join(given, FOLDER_TASK_FILE)
            if not os.path.isfile(path):
                raise BadRequestError(f"{given} is a folder without a {FOLDER_TASK_FILE}; give the task file itself")
        try:
            if os.path.getsize(path) > MAX_SPEC_BYTES:
                raise BadRequestError(f"{given} is {os.path.getsize(path)} bytes; a job spec may be at most {MAX_SPEC_BYTES} bytes")
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            raise BadRequestError(f"file not found: {given} (looked for {os.path.abspath(path)})") from None
        except PermissionError:
            raise BadRequestError(f"cannot read {given}: permission denied") from None
        shown = path if path != given else given
        return text, shown, os.path.dirname(os.path.abspath(path))

    def _upload(self, data: bytes) -> str:
        """POST /api/uploads: the archive's hash (stored once per content; sending it again is harmless)."""
        _, res = self._http.request(*_api.OPERATIONS["uploadFolder"], data=data, content_type="application/gzip", what="upload", idempotent=True)
        return str(res["hash"])

    # ─── read ──────────────────────────────────────────────────────────────────────────────

    def info(self, job_id: int) -> JobInfo:
        """The job with its tasks and attempts (GET /api/jobs/:id; Ray's ``get_job_info``). :raises NotFoundError:"""
        _, res = self._http.request(_api.OPERATIONS["getJob"][0], _path("getJob", id=int(job_id)), what=f"job {job_id}")
        return JobInfo.from_json(res)

    def status(self, job_id: int) -> JobStatus:
        """The job's status (Ray's ``get_job_status``). :raises NotFoundError:"""
        return self.info(job_id).status

    def list(
        self,
        *,
        status: Optional[Union[str, Sequence[str]]] = None,
        name: Optional[str] = None,
        queue: Optional[str] = None,
        owner: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
        submitted_after: Optional[str] = None,
        submitted_before: Optional[str] = None,
        sort: Optional[str] = None,
        page_size: int = 200,
        limit: Optional[int] = None,
    ) -> Iterator[JobInfo]:
        """The jobs a filter selects, newest first (``sort``: newest, oldest, name), page by page
        over the API's cursor; at most ``limit``. Ray's ``list_jobs``, as an iterator.

        :param status: one status or several. :param name: a name substring (or ``#4`` for job 4).
        :param owner: ``"me"`` or a user name. :param metadata: key → value pairs all must hold.
        :param submitted_after, submitted_before: ISO-8601 times or dates.
        """
        base = _list_query(status, name, queue, owner, metadata, submitted_after, submitted_before, sort)
        cursor: Optional[str] = None
        seen = 0
        while True:
            size = min(page_size, limit - seen) if limit is not None else page_size
            if size <= 0:
                return
            _, page = self._http.request(*_api.OPERATIONS["listJobs"], query=base + [("limit", size), ("cursor", cursor)], what="list jobs")
            for j in page["jobs"]:
                seen += 1
                yield JobInfo.from_json(j)
            cursor = page.get("nextCursor")
            if not cursor:
                return

    # ─── change ────────────────────────────────────────────────────────────────────────────

    def cancel(self, job_id: int) -> str:
        """Cancels the job (Ray's ``stop_job``): "cancelled" (it had not started) or "cancelling"
        (its attempt is being stopped: SIGTERM, then SIGKILL after a grace).

        :raises RefusedError: it already ended. :raises NotFoundError: :raises ForbiddenError:
        """
        _, res = self._http.request(_api.OPERATIONS["cancelJob"][0], _path("cancelJob", id=int(job_id)), what=f"cancel job {job_id}")
        return "cancelled" if int(job_id) in (res.get("cancelled") or []) else "cancelling"

    def delete(self, job_id: int) -> None:
        """Deletes a finished job with its logs (Ray's ``delete_job``). :raises RefusedError: it has not ended."""
        self._http.request(_api.OPERATIONS["deleteJob"][0], _path("deleteJob", id=int(job_id)), what=f"delete job {job_id}")

    def rerun(self, job_id: int) -> int:
        """Submits the job again exactly as it was submitted (YAML, name, envs, metadata, upload); answers the new job's id."""
        _, res = self._http.request(_api.OPERATIONS["rerunJob"][0], _path("rerunJob", id=int(job_id)), json_body={"origin": "api"}, what=f"re-run job {job_id}")
        return int(res["id"])

    def wait(self, job_id: int, timeout: Optional[float] = None, *, poll: float = 1.0) -> JobStatus:
        """Waits until the job is in a terminal status; answers it.

        :param timeout: seconds (None: no limit). :param poll: the longest wait between two reads (s).
        :raises JobdeckTimeoutError: the job did not end in time (it goes on).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.05
        while True:
            st = self.status(job_id)
            if st.is_terminal():
                return st
            if deadline is not None and time.monotonic() + delay > deadline:
                raise JobdeckTimeoutError(f"job {job_id} is still {st.value} after {timeout} s")
            time.sleep(delay)
            delay = min(poll, delay * 2)

    # ─── logs ──────────────────────────────────────────────────────────────────────────────

    @overload
    def tail(self, job_id: int, task: Optional[int] = None, attempt: Optional[int] = None, *, rank: Optional[int] = None, events: "Literal[False]" = False, follow: bool = True) -> "LogTail[LogChunk]": ...

    @overload
    def tail(self, job_id: int, task: Optional[int] = None, attempt: Optional[int] = None, *, rank: Optional[int] = None, events: "Literal[True]", follow: bool = True) -> "LogTail[Union[LogChunk, StreamEvent]]": ...

    def tail(self, job_id: int, task: Optional[int] = None, attempt: Optional[int] = None, *, rank: Optional[int] = None, events: bool = False, follow: bool = True) -> "LogTail[Any]":
        """The job's logs, followed to its end (Ray's ``tail_job_logs``): see :class:`LogTail`.

        :param task: only this task (0-based); :param attempt: only this attempt of it (1-based;
            a one-task job needs no ``task``). :param rank: only this rank of multi-node attempts.
        :raises NotFoundError: (when iterated) no such job; :raises UnreachableError: never
            connected, or the server stayed away past ``reconnect_timeout``.
        """
        if attempt is not None and task is None:
            task = 0
        jid = int(job_id)
        return LogTail[Any](lambda: Follow(self.url, self._http.headers(), self._http.token_hint, jid, Cursor(task, attempt, rank, events), follow, self.reconnect_timeout, self._http.ssl_context))

    def logs(self, job_id: int, task: Optional[int] = None, attempt: Optional[int] = None, *, rank: Optional[int] = None) -> bytes:
        """The job's logs as they are now, exactly as written: every task and attempt in order
        (or the one asked for), without following (Ray's ``get_job_logs``, as bytes)."""
        return b"".join(c.data for c in self.tail(job_id, task, attempt, rank=rank, follow=False))

    async def logs_async(self, job_id: int, task: Optional[int] = None, attempt: Optional[int] = None, *, rank: Optional[int] = None) -> bytes:
        """:meth:`logs`, awaited."""
        out = []
        async for c in self.tail(job_id, task, attempt, rank=rank, follow=False):
            out.append(c.data)
        return b"".join(out)

    async def wait_async(self, job_id: int, timeout: Optional[float] = None, *, poll: float = 1.0) -> JobStatus:
        """:meth:`wait` without blocking the event loop (its reads run in a thread)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: self.wait(job_id, timeout, poll=poll))
