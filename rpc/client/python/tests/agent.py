"""What the tests share: a fresh directory per agent with its own HOME, the fake provider,
and the paths of the example extensions. Nothing sleeps: every wait is on a frame."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[4]
#: The Python example extension of docs/examples/extensions: asks before rm -rf.
PERMISSION_GATE = REPO / "docs" / "examples" / "extensions" / "permission-gate" / "gate.py"

#: A scripted model: reads note.txt with the built-in read tool, then echoes its context.
READ_SCRIPT = {
    "turns": [
        {"expect": {"lastUserText": "What does the note say?"},
         "steps": [{"text": "Reading it."},
                   {"toolCall": {"id": "r1", "name": "read", "arguments": {"path": "note.txt"}}}]},
        {"steps": [{"echo": "context"}]},
    ]
}


def workdir(files: dict[str, str] | None = None) -> str:
    """A fresh directory holding files; removed by cleanup(dir)."""
    d = tempfile.mkdtemp(prefix="xcsh-py-client-")
    for name, body in (files or {}).items():
        Path(d, name).write_text(body)
    return d


def cleanup(d: str) -> None:
    shutil.rmtree(d, ignore_errors=True)


def options(d: str, *args: str, **extra: Any) -> dict[str, Any]:
    """Client options for an agent in d on the fake provider, without a session file."""
    out: dict[str, Any] = dict(
        provider="fake",
        cwd=d,
        env={"HOME": os.path.join(d, ".home"), "PI_CODING_AGENT_DIR": os.path.join(d, ".agent"),
             "XCSH_DETERMINISTIC": "1"},
        args=["--no-session", *args],
        request_timeout=20.0,
        stop_grace=2.0,
    )
    out.update(extra)
    return out


def script(d: str) -> str:
    """Writes READ_SCRIPT and note.txt into d; returns the script's path."""
    Path(d, "note.txt").write_text("remember the milk\n")
    path = Path(d, "script.json")
    path.write_text(json.dumps(READ_SCRIPT))
    return str(path)


def of_type(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e.get("type") == kind]


def text_of(result: dict) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


LOOKUP_PARAMS = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
