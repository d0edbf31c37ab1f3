#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""The Python peer of `sandbox-run --batch`: the same jobs file, asyncio subprocesses, a
semaphore of N, stdout and stderr read through pipes to EOF keeping the last CAP bytes of
each (as sandbox-run keeps its capped tails), one JSON result line per job as it finishes.

Usage: asyncio_runner.py JOBS.jsonl -j N [--cap BYTES] [-o RESULTS.jsonl]
"""
import argparse
import asyncio
import json
import sys
import time


async def drain(stream, cap):
    """Reads a pipe to EOF; returns (last `cap` bytes, truncated)."""
    tail = bytearray()
    truncated = False
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return bytes(tail), truncated
        tail += chunk
        if len(tail) > cap:
            del tail[: len(tail) - cap]
            truncated = True


async def run_job(line_no, job, sem, cap, out):
    async with sem:
        start = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *job["argv"],
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        (so, tso), (se, tse) = await asyncio.gather(drain(proc.stdout, cap), drain(proc.stderr, cap))
        code = await proc.wait()
        result = {
            "id": job.get("id", line_no),
            "line": line_no,
            "stdout": so.decode(errors="replace"),
            "stderr": se.decode(errors="replace"),
            "exit_code": code,
            "duration": time.monotonic() - start,
            "truncated_stdout": tso,
            "truncated_stderr": tse,
            "success": code == 0,
        }
        out.write(json.dumps(result) + "\n")
        out.flush()
        return code == 0


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jobs")
    ap.add_argument("-j", type=int, default=8)
    ap.add_argument("--cap", type=int, default=1048576)
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    out = sys.stdout if args.output == "-" else open(args.output, "w")
    sem = asyncio.Semaphore(args.j)
    tasks = set()
    ok = True
    with open(args.jobs) as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            # Bounded like sandbox-run: never more than a few tasks per slot waiting.
            while len(tasks) >= 4 * args.j:
                done, tasks = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                ok = ok and all(t.result() for t in done)
            tasks.add(asyncio.create_task(run_job(line_no, json.loads(line), sem, args.cap, out)))
    if tasks:
        done, _ = await asyncio.wait(tasks)
        ok = ok and all(t.result() for t in done)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
