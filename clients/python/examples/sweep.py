"""A hyper-parameter sweep: submit 20 jobs, one per learning rate, wait for all, print a table.

    JOBDECK_URL=… JOBDECK_TOKEN=… python3 clients/python/examples/sweep.py [--count 20]

Each job is one command here (``--cmd``); a real sweep would submit its ``train.yaml`` with
``submit(Path("train.yaml"), envs={"LR": …})`` and its folder uploaded as the workdir. The jobs
run side by side as jobdeck admits them; ``metadata`` tags them, so the sweep can be listed
again later (``client.list(metadata={"sweep": sweep_id})``). Exits non-zero when a job failed.
"""
from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from jobdeck import JobdeckClient, JobStatus


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20)
    args = parser.parse_args()
    client = JobdeckClient()
    sweep_id = f"sweep-{int(time.time())}"
    rates = [round(0.001 * (i + 1), 4) for i in range(args.count)]
    jobs = {
        lr: client.submit(
            cmd='python3 -c "import os; lr = float(os.environ[\'LR\']); print(f\'lr={lr} loss={1 / (1 + 100 * lr):.4f}\')"',
            name=f"{sweep_id}-lr{lr}",
            envs={"LR": str(lr)},
            metadata={"sweep": sweep_id},
        )
        for lr in rates
    }
    print(f"submitted {len(jobs)} jobs ({sweep_id}): {min(jobs.values())}–{max(jobs.values())}", file=sys.stderr)
    # wait() blocks; a few threads wait for many jobs at once.
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = dict(zip(jobs, pool.map(lambda j: client.wait(j, timeout=3600), jobs.values())))
    print(f"{'LR':>8}  {'JOB':>6}  {'STATUS':<10}  OUTPUT")
    for lr, job in jobs.items():
        out = client.logs(job).decode("utf-8", "replace").strip()
        print(f"{lr:>8}  {job:>6}  {statuses[lr].value:<10}  {out}")
    failed = [j for lr, j in jobs.items() if statuses[lr] is not JobStatus.SUCCEEDED]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
