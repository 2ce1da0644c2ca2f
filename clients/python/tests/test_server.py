"""The Python client against a real jobdeck server (tests/integration/clients.test.ts starts it).

Environment (set by the integration test): JOBDECK_URL and JOBDECK_TOKEN (an admin's);
JOBDECK_TEST_VIEWER_TOKEN (a viewer's: may read, not submit); JOBDECK_TEST_QUOTA_TOKEN (a member
whose pending-jobs quota is 0); JOBDECK_TEST_PAGE_NAME and JOBDECK_TEST_PAGE_COUNT (that many
jobs named with that prefix, for the paged list); JOBDECK_TEST_CONTROL (a folder: writing
``restart-N`` there asks the test to restart the server, which answers ``restarted-N``).
Without JOBDECK_URL the tests are skipped (``python -m unittest`` alone runs the offline ones).
"""
from __future__ import annotations

import asyncio
import os
import pathlib
import shutil
import tempfile
import time
import unittest
import warnings

import jobdeck
from jobdeck import JobStatus, LogChunk, StreamEvent

URL = os.environ.get("JOBDECK_URL")
needs_server = unittest.skipUnless(URL, "needs a server: JOBDECK_URL (tests/integration/clients.test.ts sets it)")

#: Bytes no UTF-8 decoder would keep (0xff, 0xfe), a CR, a line without its newline.
ODD = "printf 'a\\377\\376b\\r\\nno newline'"


def _gate_job(gate: str, lines: str = "") -> str:
    """A command that prints ``lines`` then waits (a test removes the wait by creating ``gate``)."""
    return f"{lines}while [ ! -e {gate} ]; do sleep 0.05; done; echo gate passed"


@needs_server
class SubmitWaitLogs(unittest.TestCase):
    client: jobdeck.JobdeckClient

    @classmethod
    def setUpClass(cls) -> None:
        cls.client = jobdeck.JobdeckClient()

    def test_submit_wait_logs_byte_exact(self) -> None:
        spec = "name: py-exact\n---\nname: first\nrun: " + ODD + "\n---\nname: second\nrun: printf 'second task\\n'\n"
        job = self.client.submit(spec, metadata={"suite": "python"}, envs={"X": "1"})
        self.assertEqual(self.client.wait(job, timeout=120), JobStatus.SUCCEEDED)
        want = b"a\xff\xfeb\r\nno newline" + b"second task\n"
        self.assertEqual(self.client.logs(job), want)
        self.assertEqual(self.client.logs(job, task=1), b"second task\n")
        self.assertEqual(self.client.logs(job, task=0, attempt=1), b"a\xff\xfeb\r\nno newline")
        info = self.client.info(job)
        self.assertEqual(info.name, "py-exact")
        self.assertEqual(info.metadata, {"suite": "python"})
        self.assertEqual([t.name for t in info.tasks], ["first", "second"])
        self.assertEqual(info.tasks[0].attempts[0].exit_code, 0)
        self.assertTrue(info.status.is_terminal())

    def test_tail_sync_and_async_give_the_same_bytes_and_events(self) -> None:
        job = self.client.submit(cmd=ODD)
        tail = self.client.tail(job, events=True)
        items = list(tail)
        self.assertEqual(tail.status, JobStatus.SUCCEEDED)
        self.assertEqual(b"".join(i.data for i in items if isinstance(i, LogChunk)), b"a\xff\xfeb\r\nno newline")
        kinds = [i.type for i in items if isinstance(i, StreamEvent)]
        self.assertEqual(kinds[0], "hello")
        self.assertEqual(kinds[-1], "end")
        self.assertEqual(sum(1 for i in items if isinstance(i, StreamEvent) and i.type == "attempt"), 2)

        async def collect() -> bytes:
            out = b""
            async for item in self.client.tail(job):
                assert isinstance(item, LogChunk)
                out += item.data
            return out

        self.assertEqual(asyncio.run(collect()), b"a\xff\xfeb\r\nno newline")
        self.assertEqual(asyncio.run(self.client.logs_async(job)), b"a\xff\xfeb\r\nno newline")

    def test_rerun_and_delete(self) -> None:
        job = self.client.submit(cmd="echo once", name="py-rerun")
        self.assertEqual(self.client.wait(job, timeout=60), JobStatus.SUCCEEDED)
        again = self.client.rerun(job)
        self.assertNotEqual(again, job)
        self.assertEqual(self.client.wait(again, timeout=60), JobStatus.SUCCEEDED)
        self.assertEqual(self.client.logs(again), b"once\n")
        self.assertEqual(self.client.info(again).name, "py-rerun")
        self.client.delete(job)
        with self.assertRaises(jobdeck.NotFoundError):
            self.client.status(job)

    def test_a_repeated_submission_id_answers_the_same_job(self) -> None:
        sid = f"py-idem-{time.time_ns()}"
        a = self.client.submit(cmd="true", submission_id=sid)
        b = self.client.submit(cmd="true", submission_id=sid)
        self.assertEqual(a, b)
        with self.assertRaises(jobdeck.RefusedError):
            self.client.submit(cmd="false", submission_id=sid)


@needs_server
class Workdir(unittest.TestCase):
    def setUp(self) -> None:
        self.client = jobdeck.JobdeckClient()
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="jobdeck-py-workdir-"))
        self.addCleanup(shutil.rmtree, self.dir, True)
        (self.dir / "data").mkdir()
        (self.dir / "data" / "in.txt").write_text("from the folder\n")
        (self.dir / "big.bin").write_bytes(b"x" * 1000)
        (self.dir / "notes.log").write_text("ignored\n")
        (self.dir / ".gitignore").write_text("*.log\n/big.bin\n")
        (self.dir / "link").symlink_to("data/in.txt")

    def test_a_task_file_with_a_relative_workdir_uploads_its_folder(self) -> None:
        (self.dir / "task.yaml").write_text("name: py-workdir\nworkdir: .\nrun: cat link; ls -a | sort | tr '\\n' ' '\n")
        job = self.client.submit(self.dir)  # the folder's task.yaml, as `jobdeck launch DIR`
        self.assertEqual(self.client.wait(job, timeout=120), JobStatus.SUCCEEDED)
        self.assertEqual(self.client.logs(job), b"from the folder\n. .. .gitignore data link task.yaml ")
        self.assertEqual(self.client.info(job).raw["upload"]["entries"], 5)

    def test_workdir_argument_uploads_a_folder_for_any_job(self) -> None:
        job = self.client.submit(cmd="cat data/in.txt", workdir=self.dir)
        self.assertEqual(self.client.wait(job, timeout=120), JobStatus.SUCCEEDED)
        self.assertEqual(self.client.logs(job), b"from the folder\n")

    def test_a_link_out_of_the_folder_is_refused_before_anything_is_sent(self) -> None:
        (self.dir / "out").symlink_to("/etc/hostname")
        with self.assertRaisesRegex(jobdeck.BadRequestError, r"the link out -> /etc/hostname points outside the folder"):
            self.client.submit(cmd="true", workdir=self.dir)


@needs_server
class Errors(unittest.TestCase):
    def setUp(self) -> None:
        self.client = jobdeck.JobdeckClient()
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="jobdeck-py-errors-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_not_found(self) -> None:
        with self.assertRaisesRegex(jobdeck.NotFoundError, "job 999999 not found") as cm:
            self.client.info(999999)
        self.assertEqual(cm.exception.status, 404)
        with self.assertRaises(jobdeck.NotFoundError):
            list(self.client.tail(999999))
        with self.assertRaises(jobdeck.NotFoundError):
            self.client.cancel(999999)

    def test_a_bad_spec_names_file_line_and_key(self) -> None:
        bad = self.tmp / "bad.yaml"
        bad.write_text("name: bad\nrun: echo hi\njob_recovery:\n  max_restarts_on_errors: two\n")
        with self.assertRaises(jobdeck.SpecError) as cm:
            self.client.submit(bad)
        issue = cm.exception.issues[0]
        self.assertEqual((issue.file, issue.line, issue.path), (str(bad), 4, "task[0].job_recovery.max_restarts_on_errors"))
        self.assertIn(f"{bad}:4 task[0].job_recovery.max_restarts_on_errors: expected an integer", str(cm.exception))
        self.assertIsInstance(cm.exception, jobdeck.BadRequestError)

    def test_bad_request(self) -> None:
        with self.assertRaisesRegex(jobdeck.BadRequestError, "priority") as cm:
            self.client.submit(cmd="true", priority=5000)
        self.assertNotIsInstance(cm.exception, jobdeck.SpecError)
        with self.assertRaises(jobdeck.BadRequestError):
            jobdeck.JobdeckClient("ftp://example")

    def test_refused(self) -> None:
        gate = self.tmp / "gate"
        job = self.client.submit(cmd=_gate_job(str(gate)))
        with self.assertRaisesRegex(jobdeck.RefusedError, "cancel it first|not terminal|running|PENDING|STARTING|RUNNING"):
            self.client.delete(job)
        gate.touch()
        self.assertEqual(self.client.wait(job, timeout=120), JobStatus.SUCCEEDED)
        with self.assertRaisesRegex(jobdeck.RefusedError, "already SUCCEEDED"):
            self.client.cancel(job)

    def test_forbidden_unauthorized_and_quota(self) -> None:
        viewer = jobdeck.JobdeckClient(token=os.environ["JOBDECK_TEST_VIEWER_TOKEN"])
        self.assertGreater(len(list(viewer.list(limit=1))), 0)
        with self.assertRaises(jobdeck.ForbiddenError) as cm:
            viewer.submit(cmd="true")
        self.assertEqual(cm.exception.status, 403)
        with self.assertRaisesRegex(jobdeck.UnauthorizedError, "token given to JobdeckClient refused"):
            jobdeck.JobdeckClient(token="jd_not_a_token_of_this_server").status(1)
        with self.assertRaisesRegex(jobdeck.UnauthorizedError, r"\$JOBDECK_TOKEN refused"):
            jobdeck.JobdeckClient(env={"JOBDECK_URL": URL or "", "JOBDECK_TOKEN": "jd_wrong"}).status(1)
        with self.assertRaises(jobdeck.QuotaExceededError) as q:
            jobdeck.JobdeckClient(token=os.environ["JOBDECK_TEST_QUOTA_TOKEN"]).submit(cmd="true")
        self.assertEqual(q.exception.status, 429)
        self.assertIsInstance(q.exception, jobdeck.RefusedError)

    def test_unreachable(self) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        dead = jobdeck.JobdeckClient(f"http://127.0.0.1:{port}", token="jd_x")
        with self.assertRaisesRegex(jobdeck.UnreachableError, f"cannot reach jobdeck at http://127.0.0.1:{port}"):
            dead.status(1)
        with self.assertRaises(jobdeck.UnreachableError):
            list(dead.tail(1))
        self.assertTrue(issubclass(jobdeck.UnreachableError, ConnectionError))

    def test_wait_times_out_and_the_job_goes_on(self) -> None:
        gate = self.tmp / "gate"
        job = self.client.submit(cmd=_gate_job(str(gate)))
        with self.assertRaises(jobdeck.JobdeckTimeoutError):
            self.client.wait(job, timeout=0.3)
        self.assertFalse(self.client.status(job).is_terminal())
        gate.touch()
        self.assertEqual(self.client.wait(job, timeout=120), JobStatus.SUCCEEDED)

    def test_spec_warnings_are_python_warnings(self) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            job = self.client.submit("name: warned\nrun: 'true'\nresources:\n  use_spot: true\n")
        self.assertTrue(any(issubclass(w.category, jobdeck.SpecWarning) and "use_spot" in str(w.message) for w in caught), [str(w.message) for w in caught])
        self.client.wait(job, timeout=60)


@needs_server
class Cancel(unittest.TestCase):
    def test_cancel_a_running_job(self) -> None:
        client = jobdeck.JobdeckClient()
        tmp = tempfile.mkdtemp(prefix="jobdeck-py-cancel-")
        self.addCleanup(shutil.rmtree, tmp, True)
        job = client.submit(cmd=_gate_job(os.path.join(tmp, "never"), "echo started; "))
        tail = iter(client.tail(job))
        first = next(tail)
        self.assertEqual(first.data, b"started\n")
        self.assertIn(client.cancel(job), ("cancelled", "cancelling"))
        rest = list(tail)
        self.assertNotIn(b"gate passed", b"".join(c.data for c in rest))
        self.assertEqual(client.wait(job, timeout=120), JobStatus.CANCELLED)


@needs_server
class PagedList(unittest.TestCase):
    def test_every_job_once_newest_first_across_pages(self) -> None:
        client = jobdeck.JobdeckClient()
        prefix = os.environ["JOBDECK_TEST_PAGE_NAME"]
        count = int(os.environ["JOBDECK_TEST_PAGE_COUNT"])
        jobs = list(client.list(name=prefix, page_size=37))
        ids = [j.id for j in jobs]
        self.assertEqual(len(ids), count)
        self.assertEqual(len(set(ids)), count)
        self.assertEqual(ids, sorted(ids, reverse=True))
        self.assertTrue(all(j.name.startswith(prefix) for j in jobs))
        oldest = list(client.list(name=prefix, sort="oldest", limit=250, page_size=200))
        self.assertEqual([j.id for j in oldest], sorted(ids)[:250])
        self.assertEqual(len(list(client.list(name=prefix, status=["PENDING", "RUNNING"], limit=5))), 5)


@needs_server
class TailAcrossRestart(unittest.TestCase):
    """Runs last (by name): it restarts the server under a tail."""

    def test_zz_tail_survives_a_server_restart_without_gap_or_duplicate(self) -> None:
        control = pathlib.Path(os.environ["JOBDECK_TEST_CONTROL"])
        client = jobdeck.JobdeckClient(reconnect_timeout=120)
        tmp = tempfile.mkdtemp(prefix="jobdeck-py-restart-")
        self.addCleanup(shutil.rmtree, tmp, True)
        gate = os.path.join(tmp, "gate")
        job = client.submit(cmd=f"i=0; while [ ! -e {gate} ]; do i=$((i+1)); echo line $i; sleep 0.02; done; echo last")
        tail = client.tail(job)
        data = b""
        restarted = False
        for chunk in tail:
            data += chunk.data
            if not restarted and data.count(b"\n") >= 20:
                restarted = True
                (control / "restart-py").write_text("please")
                asked = time.monotonic()
                while not (control / "restarted-py").exists():
                    # A hang guard, not a bound: the side that restarts the server failed. It ends this
                    # process before clients.test.ts gives up on it (400 s), so none is left behind.
                    if time.monotonic() - asked > 300:
                        self.fail("no restart within 5 minutes of asking for it")
                    time.sleep(0.05)
                n_before = data.count(b"\n")
                self.assertGreaterEqual(n_before, 20)
                pathlib.Path(gate).touch()
        self.assertTrue(restarted)
        lines = data.decode().splitlines()
        self.assertEqual(lines[-1], "last")
        self.assertEqual(lines[:-1], [f"line {i}" for i in range(1, len(lines))])
        self.assertGreater(tail.connections, 1)
        self.assertEqual(tail.status, JobStatus.SUCCEEDED)
        self.assertEqual(client.logs(job), data)


if __name__ == "__main__":
    unittest.main()
