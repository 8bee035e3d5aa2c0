"""The Python example runs offline and shows the three outcomes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "governed_agent.py"


def test_example_shows_allowed_denied_and_escalated() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=True
    )
    out = done.stdout
    assert "<- {'stdout': '(dry run) npm test'}" in out
    assert "destructive-delete-outside-workspace" in out
    assert "[approval asked]" in out and "destructive-force-push" in out
    assert "<- {'stdout': '(dry run) git push --force origin main'}" in out
