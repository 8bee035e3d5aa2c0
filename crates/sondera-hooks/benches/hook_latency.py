#!/usr/bin/env python3
"""Wall time of one coding-agent hook call, the way an agent makes it.

    python3 crates/sondera-hooks/benches/hook_latency.py [SONDERA] [RUNS]

SONDERA is the binary (default target/release/sondera), RUNS the calls per
way (default 200). Three ways are timed on one PreToolUse shell event of
Claude Code (`git status`, allowed, so every call is judged and recorded):

- process, in process: `sondera hook claude-code` with the built-in packs
  and the embedded store in a temporary directory;
- process, against a server: the same command with SONDERA_HARNESS_ENDPOINT
  naming a `sondera serve` on this machine (memory store);
- HTTP: POST /v1/hooks/claude-code to that server on one kept-alive
  connection, as an agent's HTTP handler does.

Each process is started, fed the input and waited for, as an agent does;
the first five calls of each way are not counted. Prints the median, p90,
p99 and max in milliseconds.
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def event(n):
    return json.dumps({
        "session_id": "bench-session",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status", "description": "Show the tree"},
        "tool_use_id": f"toolu_{n:06d}",
    }).encode()


def summary(name, samples):
    samples = sorted(samples)
    pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
    print(f"{name:34} median {pick(0.5):6.2f}  p90 {pick(0.9):6.2f}  "
          f"p99 {pick(0.99):6.2f}  max {samples[-1]:6.2f} ms  ({len(samples)} calls)")


def processes(binary, runs, env):
    times = []
    for n in range(runs + 5):
        started = time.perf_counter()
        done = subprocess.run([binary, "hook", "claude-code"], input=event(n),
                              capture_output=True, env=env)
        elapsed = (time.perf_counter() - started) * 1000
        if done.returncode != 0 or done.stdout.strip():
            sys.exit(f"unexpected answer: {done}")
        if n >= 5:
            times.append(elapsed)
    return times


def over_http(port, runs):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    for n in range(runs + 5):
        started = time.perf_counter()
        connection.request("POST", "/v1/hooks/claude-code", body=event(n),
                           headers={"content-type": "application/json"})
        answer = connection.getresponse().read()
        elapsed = (time.perf_counter() - started) * 1000
        if answer != b"{}":
            sys.exit(f"unexpected answer: {answer!r}")
        if n >= 5:
            times.append(elapsed)
    return times


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/sondera"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SONDERA_")}
    with tempfile.TemporaryDirectory() as data:
        local = dict(clean, SONDERA_DATA_DIR=data, HOME=data)
        summary("process, in process (SQLite)", processes(binary, runs, local))
    grpc, port = free_port(), free_port()
    server = subprocess.Popen(
        [binary, "serve", "--store", "memory", "--grpc-addr", f"127.0.0.1:{grpc}",
         "--http-addr", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=clean)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        remote = dict(clean, SONDERA_HARNESS_ENDPOINT=f"127.0.0.1:{grpc}", HOME="/nonexistent")
        summary("process, against a server", processes(binary, runs, remote))
        summary("HTTP hook, kept-alive connection", over_http(port, runs))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
