"""Following a job's logs from a notebook, cell by cell (run it as a script, or paste the cells).

    JOBDECK_URL=… JOBDECK_TOKEN=… python3 clients/python/examples/tail_notebook.py

Cell 2 tails with a plain ``for`` (a generator); cell 3 with ``async for`` — Jupyter runs a
top-level ``await`` in its own event loop. Both end when the job ends and carry on by themselves
if the connection drops or the server restarts (nothing lost, nothing printed twice).
"""
from __future__ import annotations

import asyncio

from jobdeck import JobdeckClient, LogChunk, StreamEvent

# %% cell 1: submit a two-task pipeline whose first task fails once and is restarted
client = JobdeckClient()
job = client.submit(
    """
name: notebook-demo
---
name: prepare
job_recovery:
  max_restarts_on_errors: 1
run: |
  for i in 1 2 3; do echo "preparing $i"; sleep 0.2; done
  [ "$JOBDECK_ATTEMPT" = 2 ] || { echo "flaky failure"; exit 1; }
---
name: train
run: for e in 1 2; do echo "epoch $e loss 0.$((9 - e))"; sleep 0.2; done
"""
)
print(f"job {job} submitted")

# %% cell 2: follow it, with the attempts and the restart as they happen
tail = client.tail(job, events=True)
for item in tail:
    if isinstance(item, LogChunk):
        print(f"[task {item.task} attempt {item.attempt}] {item.text}", end="")
    elif isinstance(item, StreamEvent) and item.type == "attempt":
        m = item.message
        print(f"--- task {m['task']} attempt {m['attempt']} {m['phase']} ({m['status']})")
print(f"job {job} ended: {tail.status}")


# %% cell 3: the same logs again, with async for (in Jupyter: `await replay()`)
async def replay() -> None:
    async for chunk in client.tail(job, task=1):
        if isinstance(chunk, LogChunk):
            print(chunk.text, end="")


asyncio.run(replay())

# %% cell 4: everything at once, as bytes
print(client.logs(job).decode())
