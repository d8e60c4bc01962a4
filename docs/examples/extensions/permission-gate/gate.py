#!/usr/bin/env python3
"""A permission gate for xcsh: asks the user before any bash command that
runs `rm -rf`, and blocks it unless they allow it.

An xcsh extension is a process that speaks JSON-RPC 2.0, one message per
line, on its stdin and stdout (docs/extensions.md). This one uses only the
Python standard library. Install it by making it executable and putting it
(or a link to it) in .xcsh/extensions/, or run xcsh with
--extension path/to/gate.py.
"""
import json
import re
import sys



def dangerous(command):
    """Whether a shell command runs rm with both -r and -f, however spelled
    (-rf, -fr, -r -f, -Rf, --recursive --force), in any of its parts."""
    for part in re.split(r"[;&|()\n]", command):
        words = part.split()
        if "rm" not in words:
            continue
        args = words[words.index("rm") + 1:]
        short = "".join(w[1:] for w in args if w.startswith("-") and not w.startswith("--"))
        recursive = "r" in short or "R" in short or "--recursive" in args
        force = "f" in short or "--force" in args
        if recursive and force:
            return True
    return False


# How long the user has to answer (ms); no answer means no.
CONFIRM_TIMEOUT_MS = 60000

next_id = 0
backlog = []  # messages read while waiting for an answer, handled later


def send(message):
    message["jsonrpc"] = "2.0"
    # One message per line; nothing else may ever be printed on stdout.
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        return None  # the agent closed our stdin: time to exit
    try:
        return json.loads(line)
    except ValueError:
        return {}


def call(method, params):
    """Ask the agent something and wait for its answer."""
    global next_id
    next_id += 1
    my_id = "gate-%d" % next_id
    send({"id": my_id, "method": method, "params": params})
    while True:
        message = read()
        if message is None:
            sys.exit(0)
        if message.get("id") == my_id and "method" not in message:
            if "error" in message:
                raise RuntimeError(message["error"]["message"])
            return message.get("result")
        backlog.append(message)


def on_tool_call(request_id, params):
    """The tool_call hook: None lets the call run, a block stops it."""
    if params.get("toolName") != "bash":
        return None
    command = params.get("input", {}).get("command", "")
    if not dangerous(command):
        return None
    answer = call("ui.confirm", {
        "title": "Allow a destructive command?",
        "message": command,
        "timeout": CONFIRM_TIMEOUT_MS,
        # The dialog belongs to this hook: an abort of the run closes it,
        # and the hook's deadline waits while the user decides.
        "during": request_id,
        "sessionId": params.get("sessionId"),
    })
    if answer and answer.get("confirmed"):
        return None
    return {"block": True, "reason": "Blocked by the permission gate: " + command}


def handle(message):
    method = message.get("method")
    if "id" not in message or method is None:
        return  # a notification, or an answer nobody waits for
    if method == "initialize":
        result = {"name": "permission-gate", "subscribe": ["tool_call"]}
    elif method == "tool_call":
        try:
            result = on_tool_call(message["id"], message.get("params", {}))
        except Exception as e:  # reported by the agent as extension_error
            send({"id": message["id"], "error": {"code": -32000, "message": str(e)}})
            return
    else:
        send({"id": message["id"], "error": {"code": -32601, "message": "unknown method " + str(method)}})
        return
    send({"id": message["id"], "result": result})


def main():
    while True:
        message = backlog.pop(0) if backlog else read()
        if message is None:
            return
        handle(message)


if __name__ == "__main__":
    main()
