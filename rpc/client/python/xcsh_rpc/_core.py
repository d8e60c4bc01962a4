"""What the sync and asyncio clients share: the command line, the command methods, matching
responses to requests, and the shapes of host tool results and dialog answers.

The command methods are written once, in Commands: each calls self._request, which the sync
client implements by waiting and the asyncio client as a coroutine, so `client.get_state()`
returns the state in one and an awaitable of it in the other.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Iterable, Mapping

from .protocol import SCHEMA_HASH, AgentEvent, RpcCommand, RpcResponse

#: Dialog methods of extension_ui_request, answered with extension_ui_response.
DIALOGS = frozenset({"select", "confirm", "input", "editor"})
# Commands the agent answers when their work ends, so an id-less parse error is matched to
# another waiting request first (docs/client.md, "Requests and errors").
ANSWERED_LATE = frozenset({"abort", "abort_and_prompt", "bash"})
# Commands whose failure to start comes as a second response after the acknowledgement.
STARTS_RUN = frozenset({"prompt", "abort_and_prompt", "continue"})

#: How long a request waits for its response by default, in seconds.
DEFAULT_TIMEOUT = 30.0
#: bash's bound: the agent stops a command at 300 s.
BASH_TIMEOUT = 310.0


class RpcError(Exception):
    """A command the agent answered with success:false."""

    def __init__(self, command: str, message: str, code: str | None = None):
        super().__init__(message)
        #: The command's type.
        self.command = command
        #: A machine-readable code when the agent gives one (session_busy, stale_cursor, ...).
        self.code = code


class ClientClosed(Exception):
    """The client is stopped or the agent exited; the message says why."""


def argv(cli_path: str | None, provider: str | None, model: str | None, args: Iterable[str] | None) -> list[str]:
    """The agent's command line: cli_path (default $XCSH_BIN, else xcsh on PATH) with
    --mode rpc and the options. A path ending in .js/.mjs/.cjs runs with node, as pi's
    client runs its dist/cli.js."""
    path = cli_path or os.environ.get("XCSH_BIN") or "xcsh"
    out = ["node", path] if path.endswith((".js", ".mjs", ".cjs")) else [path]
    out += ["--mode", "rpc"]
    if provider:
        out += ["--provider", provider]
    if model:
        out += ["--model", model]
    out += list(args or [])
    return out


def environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """This process's environment with env added."""
    merged = dict(os.environ)
    merged.update(env or {})
    return merged


def command(request_id: str, type_: str, fields: Mapping[str, Any]) -> RpcCommand:
    """A command frame; fields set to None are left out (absent keys, not nulls)."""
    frame: dict[str, Any] = {"id": request_id, "type": type_}
    frame.update({k: v for k, v in fields.items() if v is not None})
    return frame


def data_of(response: RpcResponse) -> Any:
    """The response's data, or RpcError for a failure."""
    if not response.get("success"):
        raise RpcError(str(response.get("command")), str(response.get("error")), response.get("code"))
    return response.get("data")


def match_idless(response: RpcResponse, pending: Iterable[tuple[str, str]]) -> str | None:
    """The id of the waiting request an id-less failure answers, or None. pending yields
    (id, command type) oldest first. `Unknown command: <type>` goes to the oldest request
    of that type; a parse failure to the oldest, preferring one not answered late."""
    if "id" in response or response.get("success"):
        return None
    items = list(pending)
    if response.get("command") == "parse":
        for rid, kind in items:
            if kind not in ANSWERED_LATE:
                return rid
        return items[0][0] if items else None
    if str(response.get("error", "")).startswith("Unknown command: "):
        for rid, kind in items:
            if kind == response.get("command"):
                return rid
    return None


def text_result(text: str, is_error: bool = False) -> dict[str, Any]:
    """A tool result with one text part."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "details": {}}
    if is_error:
        result["isError"] = True
    return result


def tool_result(out: Any) -> dict[str, Any]:
    """A handler's return as the host_tool_result's result: a string is a text result, a
    dict is sent with content and details defaulted."""
    if isinstance(out, str):
        return text_result(out)
    if not isinstance(out, Mapping):
        raise TypeError(f"a host tool handler returned {type(out).__name__}, want str or dict")
    result = dict(out)
    result.setdefault("content", [])
    if result.get("details") is None:
        result["details"] = {}
    return result


def partial_result(partial: Any) -> dict[str, Any]:
    """A handler's update as a host_tool_update's partialResult."""
    if isinstance(partial, str):
        return {"content": [{"type": "text", "text": partial}]}
    return dict(partial)


def answer_body(answer: Any) -> dict[str, Any]:
    """A dialog handler's answer as the extension_ui_response's fields: a string is a value,
    a bool a confirmation, None the default (cancelled); a dict is sent as it is."""
    if answer is None:
        return {"cancelled": True}
    if isinstance(answer, bool):
        return {"confirmed": answer}
    if isinstance(answer, str):
        return {"value": answer}
    return dict(answer)


def tool_definitions(tools: Iterable[Any]) -> tuple[list[dict[str, Any]], dict[str, Callable[..., Any]]]:
    """Splits HostTool values (or dicts with a "handler") into wire definitions and handlers."""
    defs, handlers = [], {}
    for tool in tools:
        t = dict(tool) if isinstance(tool, Mapping) else dict(vars(tool))
        handler = t.pop("handler")
        handlers[t["name"]] = handler
        defs.append({k: v for k, v in t.items() if v is not None and not (k == "hidden" and v is False)})
    return defs, handlers


def warn(message: str) -> None:
    """A line on stderr about a handler's failure the client cannot report otherwise."""
    print(f"xcsh_rpc: {message}", file=sys.stderr)


class Commands:
    """The typed command methods, pi's first, then ours. Each returns what _request returns:
    the value in the sync client, an awaitable of it in the asyncio one."""

    def _request(self, type_: str, fields: Mapping[str, Any], pick: Callable[[Any], Any] | None = None,
                 timeout: float | None = None) -> Any:
        raise NotImplementedError

    _ready: AgentEvent | None

    def schema_hash(self) -> str | None:
        """The schema hash the agent's ready frame carries (None when it sends none)."""
        h = (self._ready or {}).get("schemaHash")
        return h if isinstance(h, str) and h else None

    def schema_matches(self) -> bool | None:
        """Whether the agent speaks the protocol this package's types were generated from (its
        ready frame's schemaHash equals SCHEMA_HASH); None when either side does not say."""
        agent = self.schema_hash()
        if agent is None or not SCHEMA_HASH:
            return None
        return agent == SCHEMA_HASH

    def call(self, type_: str, fields: Mapping[str, Any] | None = None, timeout: float | None = None) -> Any:
        """Sends any command and returns its data: for commands this client has no method for."""
        return self._request(type_, fields or {}, None, timeout)

    # pi's commands

    def prompt(self, message: str, images: list[dict] | None = None, streaming_behavior: str | None = None,
               output_schema: dict | None = None) -> Any:
        """Sends a prompt; returns once the agent acknowledged it. A failure to start (busy, no
        model, no API key) comes after: listeners get it as a response event, and a waiting
        wait_for_idle, collect_events or prompt_and_wait raises it."""
        return self._request("prompt", {"message": message, "images": images,
                                        "streamingBehavior": streaming_behavior, "outputSchema": output_schema},
                             _none)

    def steer(self, message: str, images: list[dict] | None = None) -> Any:
        """Queues a steering message for the next turn boundary."""
        return self._request("steer", {"message": message, "images": images}, _none)

    def follow_up(self, message: str, images: list[dict] | None = None) -> Any:
        """Queues a follow-up message for when the run would stop."""
        return self._request("follow_up", {"message": message, "images": images}, _none)

    def abort(self) -> Any:
        """Aborts the run; returns once its closing events are written."""
        return self._request("abort", {}, _none)

    def new_session(self, parent_session: str | None = None) -> Any:
        """{"cancelled": bool}."""
        return self._request("new_session", {"parentSession": parent_session})

    def get_state(self) -> Any:
        """The get_state object (docs/rpc.md)."""
        return self._request("get_state", {})

    def set_model(self, provider: str, model_id: str) -> Any:
        return self._request("set_model", {"provider": provider, "modelId": model_id})

    def cycle_model(self) -> Any:
        return self._request("cycle_model", {})

    def get_available_models(self) -> Any:
        return self._request("get_available_models", {}, _key("models"))

    def set_thinking_level(self, level: str) -> Any:
        return self._request("set_thinking_level", {"level": level}, _none)

    def cycle_thinking_level(self) -> Any:
        return self._request("cycle_thinking_level", {})

    def set_steering_mode(self, mode: str) -> Any:
        return self._request("set_steering_mode", {"mode": mode}, _none)

    def set_follow_up_mode(self, mode: str) -> Any:
        return self._request("set_follow_up_mode", {"mode": mode}, _none)

    def compact(self, custom_instructions: str | None = None) -> Any:
        return self._request("compact", {"customInstructions": custom_instructions})

    def set_auto_compaction(self, enabled: bool) -> Any:
        return self._request("set_auto_compaction", {"enabled": enabled}, _none)

    def set_auto_retry(self, enabled: bool) -> Any:
        return self._request("set_auto_retry", {"enabled": enabled}, _none)

    def abort_retry(self) -> Any:
        return self._request("abort_retry", {}, _none)

    def bash(self, command_: str) -> Any:
        """Runs a shell command; returns when it ends (bounded by 310 s)."""
        return self._request("bash", {"command": command_}, None, BASH_TIMEOUT)

    def abort_bash(self) -> Any:
        return self._request("abort_bash", {}, _none)

    def get_session_stats(self) -> Any:
        return self._request("get_session_stats", {})

    def export_html(self, output_path: str | None = None) -> Any:
        return self._request("export_html", {"outputPath": output_path})

    def switch_session(self, session_path: str) -> Any:
        return self._request("switch_session", {"sessionPath": session_path})

    def fork(self, entry_id: str) -> Any:
        return self._request("fork", {"entryId": entry_id})

    def get_fork_messages(self) -> Any:
        return self._request("get_fork_messages", {}, _key("messages"))

    def get_last_assistant_text(self) -> Any:
        """The trimmed text of the last assistant message, or None."""
        return self._request("get_last_assistant_text", {}, lambda d: (d or {}).get("text"))

    def set_session_name(self, name: str) -> Any:
        return self._request("set_session_name", {"name": name}, _none)

    def get_messages(self) -> Any:
        return self._request("get_messages", {}, _key("messages"))

    def get_commands(self) -> Any:
        return self._request("get_commands", {}, _key("commands"))

    # ours (and omp's)

    def abort_and_prompt(self, message: str, images: list[dict] | None = None) -> Any:
        return self._request("abort_and_prompt", {"message": message, "images": images}, _none)

    def continue_(self) -> Any:
        """The `continue` command: runs the agent again from the context as it stands."""
        return self._request("continue", {}, _none)

    def set_interrupt_mode(self, mode: str) -> Any:
        return self._request("set_interrupt_mode", {"mode": mode}, _none)

    def branch(self, entry_id: str) -> Any:
        return self._request("branch", {"entryId": entry_id})

    def clone(self) -> Any:
        return self._request("clone", {})

    def get_branch_messages(self) -> Any:
        return self._request("get_branch_messages", {}, _key("messages"))

    def get_messages_page(self, limit: int | None = None, cursor: str | None = None,
                          order: str | None = None) -> Any:
        return self._request("get_messages_page", {"limit": limit, "cursor": cursor, "order": order})

    def get_available_commands(self) -> Any:
        return self._request("get_available_commands", {}, _key("commands"))

    def get_mcp_servers(self) -> Any:
        return self._request("get_mcp_servers", {}, _key("servers"))

    def set_todos(self, phases: list[dict]) -> Any:
        return self._request("set_todos", {"phases": phases}, _key("todoPhases"))

    def set_budget(self, **limits: Any) -> Any:
        """set_budget with maxCost, maxTokens, maxTimeMs (also as max_cost, max_tokens,
        max_time_ms): a number sets a limit, 0 removes it, an absent one is kept."""
        names = {"max_cost": "maxCost", "max_tokens": "maxTokens", "max_time_ms": "maxTimeMs"}
        fields = {names.get(k, k): v for k, v in limits.items()}
        return self._request("set_budget", fields)

    def set_host_tools(self, tools: list[dict]) -> Any:
        """The bare set_host_tools command: sends definitions, leaves the handlers alone."""
        return self._request("set_host_tools", {"tools": tools}, _key("toolNames"))


def _none(_: Any) -> None:
    return None


def _key(name: str) -> Callable[[Any], Any]:
    return lambda data: (data or {}).get(name)


def is_late_failure(frame: AgentEvent) -> bool:
    """Whether a response frame is a failure (for the late-failure check)."""
    return frame.get("type") == "response" and not frame.get("success")
