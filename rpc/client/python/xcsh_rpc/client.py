"""RpcClient: the synchronous client, on subprocess and threads.

One reader thread reads the agent's stdout, resolves waiting requests and calls the event
listeners in order; host tool and dialog handlers each run on a thread of their own, so a
slow handler never holds up the stream. Every write to the agent's stdin is one frame under
one lock.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from . import _core
from ._core import ClientClosed, RpcError
from .protocol import AgentEvent, ExtensionUiRequest, ExtensionUiResponse

EventListener = Callable[[AgentEvent], None]


@dataclass
class HostTool:
    """A host tool and the handler that serves its calls. handler(args, ctx) returns a string
    (a text result) or a result dict ({"content": [...], "details"?, "isError"?}); an
    exception becomes an error result with its message."""

    name: str
    description: str
    parameters: dict
    handler: Callable[..., Any]
    label: str | None = None
    hidden: bool = False


class HostToolContext:
    """What a host tool handler gets besides the model's arguments."""

    def __init__(self, tool_call_id: str, update: Callable[[Any], None], cancelled: Any):
        #: The model's tool call id.
        self.tool_call_id = tool_call_id
        #: Set when the agent withdraws the call (host_tool_cancel) or the client stops: a
        #: threading.Event in the sync client, an asyncio.Event in the asyncio one.
        self.cancelled = cancelled
        self._update = update

    def update(self, partial: Any) -> None:
        """Sends a partial result (host_tool_update): a string, or {"content": [...]}."""
        self._update(partial)


def _is(kind: str) -> Callable[[AgentEvent], bool]:
    return lambda event: event.get("type") == kind


class _Pending:
    __slots__ = ("type", "done", "response")

    def __init__(self, type_: str):
        self.type = type_
        self.done = threading.Event()
        self.response: Any = None


class RpcClient(_core.Commands):
    """Drives `xcsh --mode rpc` (docs/client.md, "Python"). Every command method waits for
    the agent's answer and returns its data, or raises RpcError."""

    def __init__(self, cli_path: str | None = None, cwd: str | None = None, env: Mapping[str, str] | None = None,
                 provider: str | None = None, model: str | None = None, args: list[str] | None = None,
                 request_timeout: float = _core.DEFAULT_TIMEOUT, start_timeout: float = 30.0,
                 stop_grace: float = 5.0):
        self._argv = _core.argv(cli_path, provider, model, args)
        self._cwd = cwd
        self._env = env
        self.request_timeout = request_timeout
        self.start_timeout = start_timeout
        self.stop_grace = stop_grace
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # pending, listeners, late ids, waiters, calls, dialogs
        self._write_lock = threading.Lock()  # one frame per write
        self._pending: dict[str, _Pending] = {}  # insertion order is request order
        self._listeners: list[EventListener] = []
        self._next_id = 0
        self._stderr: list[str] = []
        self._ready: AgentEvent | None = None
        self._ready_event = threading.Event()
        self._exit_error: Exception | None = None
        self._late_ids: set[str] = set()
        self._late_waiters: set[Callable[[Exception, bool], None]] = set()
        self._host_tools: dict[str, Callable[..., Any]] = {}
        self._host_calls: dict[str, threading.Event] = {}
        self._dialogs: dict[str, threading.Event] = {}
        self._ui: Any = None
        self._threads: list[threading.Thread] = []  # the stdout and stderr readers
        self._workers: set[threading.Thread] = set()  # host tool calls and dialogs running

    # lifecycle

    def start(self) -> None:
        """Starts the agent and waits for its ready frame."""
        if self._proc is not None:
            raise RuntimeError("Client already started")
        self._exit_error = None
        self._ready_event.clear()
        try:
            self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, cwd=self._cwd, env=_core.environment(self._env))
        except OSError as e:
            raise ClientClosed(f"Cannot start {self._argv[0]}: {e}") from e
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True, name="xcsh-rpc-reader"),
                         threading.Thread(target=self._read_stderr, daemon=True, name="xcsh-rpc-stderr")]
        for t in self._threads:
            t.start()
        if not self._ready_event.wait(self.start_timeout) or self._ready is None:
            error = self._exit_error or ClientClosed(
                f"Timeout waiting for the agent's ready frame. Stderr: {self.get_stderr()}")
            self._kill()
            raise error

    def stop(self) -> None:
        """Closes the agent's stdin and gives it stop_grace seconds to finish its running work
        (the agent drains a run on stdin EOF), then SIGTERM, then SIGKILL. Waiting requests
        fail with ClientClosed; handlers see their cancelled event set."""
        proc = self._proc
        if proc is None:
            return
        try:
            with self._write_lock:
                proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            proc.wait(self.stop_grace)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(2.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._teardown()

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._teardown()

    def _teardown(self) -> None:
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(5.0)
        self._fail_all(ClientClosed("Client stopped"))
        # The handlers saw their cancelled events set: wait for them a while, so none writes to
        # a client that is gone. One that ignores its event is left behind (a daemon thread).
        deadline = time.monotonic() + 2.0
        with self._lock:
            workers = list(self._workers)
        for t in workers:
            t.join(max(deadline - time.monotonic(), 0))
        proc, self._proc = self._proc, None
        if proc is not None:
            with self._write_lock:
                for stream in (proc.stdin, proc.stdout, proc.stderr):
                    try:
                        if stream is not None:
                            stream.close()
                    except OSError:
                        pass  # stdin's last flush to a dead agent

    def __enter__(self) -> RpcClient:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def on_event(self, listener: EventListener) -> Callable[[], None]:
        """Subscribes to every frame that is not the response to a waiting request; listeners
        run on the reader thread, in order, and must return quickly. Returns an unsubscribe
        function."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return unsubscribe

    def get_stderr(self) -> str:
        """The agent's stderr so far."""
        return "".join(self._stderr)

    def get_ready(self) -> AgentEvent | None:
        """The agent's ready frame (its version, and the schema hash when it sends one)."""
        return self._ready

    # host tools and extension UI

    def register_host_tools(self, tools: list[HostTool | dict]) -> list[str]:
        """Installs the handlers and sends set_host_tools (replacing the previous host tools);
        if the agent refuses the set the previous handlers are restored and RpcError raised.
        Returns the registered names."""
        defs, handlers = _core.tool_definitions(tools)
        with self._lock:
            previous, self._host_tools = self._host_tools, handlers
        try:
            return self.set_host_tools(defs)
        except BaseException:
            with self._lock:
                self._host_tools = previous
            raise

    def on_ui(self, handler: Any) -> None:
        """Sets the handler of extension UI requests (None removes it): an object with
        dialog(request, cancelled) -> answer (a str value, a bool confirmation, None for the
        default, or a dict sent as it is) and/or notify(request), or a plain function used as
        dialog. Without a dialog handler every dialog is answered cancelled at once."""
        self._ui = handler

    def send_ui_response(self, response: ExtensionUiResponse) -> None:
        """Sends an extension_ui_response as it is."""
        self._write(dict(response))

    # waiting for runs

    def collect_events(self, timeout: float = 60.0) -> list[AgentEvent]:
        """Collects every event from now until the next agent_end (included). Raises
        TimeoutError, or RpcError when a prompt fails to start before any run started."""
        return self._collect(_is("agent_end"), timeout, None)

    def _collect(self, last: Callable[[AgentEvent], bool], timeout: float,
                 send: Callable[[], Any] | None) -> list[AgentEvent]:
        q: queue.Queue[Any] = queue.Queue()
        started = threading.Event()

        def on_event(event: AgentEvent) -> None:
            if event.get("type") == "agent_start":
                started.set()
            q.put(("event", event))

        # A failure to start concerns this wait only while no run has started since it began:
        # a second prompt refused as busy does not fail the wait for the run already going.
        def on_fail(error: Exception, always: bool) -> None:
            if always or not started.is_set():
                q.put(("error", error))

        unsubscribe = self.on_event(on_event)
        with self._lock:
            self._late_waiters.add(on_fail)
        try:
            if send is not None:
                send()
            deadline = time.monotonic() + timeout
            events: list[AgentEvent] = []
            while True:
                try:
                    kind, item = q.get(timeout=max(deadline - time.monotonic(), 0))
                except queue.Empty:
                    raise TimeoutError(f"Timeout collecting events. Stderr: {self.get_stderr()}") from None
                if kind == "error":
                    raise item
                events.append(item)
                if last(item):
                    return events
        finally:
            unsubscribe()
            with self._lock:
                self._late_waiters.discard(on_fail)

    def wait_for_idle(self, timeout: float = 60.0) -> None:
        """Waits for the next agent_end (agent_end alone does not mean idle: a retry or
        compaction may follow; get_state's isStreaming says)."""
        self.collect_events(timeout)

    def prompt_and_wait(self, message: str, images: list[dict] | None = None, timeout: float = 60.0,
                        **options: Any) -> list[AgentEvent]:
        """Sends a prompt and collects its events until agent_end."""
        return self._collect(_is("agent_end"), timeout, lambda: self.prompt(message, images, **options))

    def prompt_for_output(self, message: str, output_schema: dict, images: list[dict] | None = None,
                          timeout: float = 60.0) -> AgentEvent:
        """Sends a prompt with an output schema and returns its output_schema_end event, which
        follows agent_end: {success, retries, output} or {success: False, retries, errors}."""
        events = self._collect(_is("output_schema_end"), timeout,
                               lambda: self.prompt(message, images, output_schema=output_schema))
        return events[-1]

    # internals

    def _request(self, type_: str, fields: Mapping[str, Any], pick: Callable[[Any], Any] | None = None,
                 timeout: float | None = None) -> Any:
        with self._lock:
            if self._exit_error is not None:
                raise self._exit_error
            if self._proc is None:
                raise ClientClosed("Client not started")
            self._next_id += 1
            rid = f"req_{self._next_id}"
            p = self._pending[rid] = _Pending(type_)
        self._write(_core.command(rid, type_, fields))
        if not p.done.wait(timeout or self.request_timeout):
            with self._lock:
                self._pending.pop(rid, None)
            raise TimeoutError(f"Timeout waiting for response to {type_}. Stderr: {self.get_stderr()}")
        if isinstance(p.response, Exception):
            raise p.response
        data = _core.data_of(p.response)
        return pick(data) if pick else data

    def _write(self, frame: Mapping[str, Any]) -> None:
        line = (json.dumps(frame, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        proc = self._proc
        if proc is None or proc.stdin is None:
            return
        with self._write_lock:
            try:
                proc.stdin.write(line)
                proc.stdin.flush()
            except (OSError, ValueError):
                pass  # the agent is gone: the reader reports it

    def _read_stderr(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stderr is not None
        for chunk in iter(lambda: proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
            self._stderr.append(chunk.decode(errors="replace"))

    def _read_stdout(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        # readline on a binary stream has no length limit and splits on LF only.
        for raw in iter(proc.stdout.readline, b""):
            line = raw.rstrip(b"\n").rstrip(b"\r")
            if not line.strip():
                continue
            try:
                frame = json.loads(line)
            except ValueError:
                continue  # not a frame
            if isinstance(frame, dict):
                self._handle(frame)
        code = proc.wait()
        with self._lock:
            self._exit_error = ClientClosed(f"Agent process exited (code {code}). Stderr: {self.get_stderr().strip()}")
        self._ready_event.set()
        self._fail_all(self._exit_error)

    def _fail_all(self, error: Exception) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
            events = list(self._host_calls.values()) + list(self._dialogs.values())
            waiters = list(self._late_waiters)
            self._late_ids.clear()
        for p in pending.values():
            p.response = error
            p.done.set()
        for e in events:
            e.set()
        for w in waiters:
            w(error, True)

    def _handle(self, frame: AgentEvent) -> None:
        kind = frame.get("type")
        if kind == "response" and self._settle(frame):
            return
        if kind == "ready":
            self._ready = frame
            self._ready_event.set()
        elif kind in ("agent_start", "agent_end"):
            with self._lock:
                self._late_ids.clear()
        elif kind == "host_tool_call":
            self._run_host_tool(frame)
        elif kind == "host_tool_cancel":
            with self._lock:
                cancelled = self._host_calls.get(str(frame.get("targetId")))
            if cancelled is not None:
                cancelled.set()
        elif kind == "extension_ui_request":
            self._handle_ui(frame)  # type: ignore[arg-type]
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(frame)
            except Exception as e:  # a listener's failure is its own; the reader goes on
                _core.warn(f"event listener failed: {e!r}")

    def _settle(self, response: Any) -> bool:
        """Resolves the request a response answers; False when it answers none (an event)."""
        rid = response.get("id")
        late_error = None
        with self._lock:
            if isinstance(rid, str):
                p = self._pending.pop(rid, None)
                if p is None and rid in self._late_ids and not response.get("success"):
                    self._late_ids.discard(rid)
                    late_error = RpcError(str(response.get("command")), str(response.get("error")),
                                          response.get("code"))
                    waiters = list(self._late_waiters)
                elif p is not None and response.get("success") and p.type in _core.STARTS_RUN:
                    self._late_ids.add(rid)
            else:
                match = _core.match_idless(response, ((k, v.type) for k, v in self._pending.items()))
                p = self._pending.pop(match) if match is not None else None
        if late_error is not None:
            for w in waiters:
                w(late_error, False)
        if p is None:
            return False
        p.response = response
        p.done.set()
        return True

    def _run_host_tool(self, frame: AgentEvent) -> None:
        cid = str(frame.get("id"))
        name = str(frame.get("toolName"))
        cancelled = threading.Event()
        with self._lock:
            handler = self._host_tools.get(name)
            self._host_calls[cid] = cancelled

        def update(partial: Any) -> None:
            if not cancelled.is_set():
                self._write({"type": "host_tool_update", "id": cid, "partialResult": _core.partial_result(partial)})

        def run() -> None:
            if handler is None:
                result = _core.text_result(f'Host tool "{name}" is not registered', True)
            else:
                try:
                    ctx = HostToolContext(str(frame.get("toolCallId")), update, cancelled)
                    result = _core.tool_result(handler(frame.get("arguments") or {}, ctx))
                except Exception as e:
                    result = _core.text_result(str(e), True)
            with self._lock:
                self._host_calls.pop(cid, None)
            if cancelled.is_set():
                return  # withdrawn: the agent has already failed the call
            is_error = result.pop("isError", False)
            reply: dict[str, Any] = {"type": "host_tool_result", "id": cid, "result": result}
            if is_error:
                reply["isError"] = True  # isError belongs to the frame (docs/rpc.md, "Host tools")
            self._write(reply)

        self._spawn(run, f"xcsh-host-tool-{cid}")

    def _handle_ui(self, request: ExtensionUiRequest) -> None:
        method = request.get("method")
        if method == "cancel":
            with self._lock:
                cancelled = self._dialogs.get(str(request.get("targetId")))
            if cancelled is not None:
                cancelled.set()
            return
        ui = self._ui
        if method not in _core.DIALOGS:
            notify = getattr(ui, "notify", None)
            if notify is not None:
                try:
                    notify(request)
                except Exception as e:
                    _core.warn(f"UI notify handler failed: {e!r}")
            return
        rid = request["id"]
        dialog = getattr(ui, "dialog", None) or (ui if callable(ui) else None)
        if dialog is None:
            self._write({"type": "extension_ui_response", "id": rid, "cancelled": True})
            return
        cancelled = threading.Event()
        answered = threading.Lock()  # acquired by the one answer sent

        def answer(body: dict[str, Any]) -> None:
            if answered.acquire(blocking=False):
                self._write({"type": "extension_ui_response", "id": rid, **body})

        with self._lock:
            self._dialogs[rid] = cancelled
        timeout = request.get("timeout")
        timer = None
        if isinstance(timeout, (int, float)) and timeout > 0:
            def expire() -> None:
                cancelled.set()
                answer({"cancelled": True, "timedOut": True})
            timer = threading.Timer(timeout / 1000, expire)
            timer.daemon = True
            timer.start()

        def run() -> None:
            try:
                body = _core.answer_body(dialog(request, cancelled))
            except Exception:
                body = {"cancelled": True}
            if timer is not None:
                timer.cancel()
            with self._lock:
                self._dialogs.pop(rid, None)
            if not cancelled.is_set():
                answer(body)

        self._spawn(run, f"xcsh-ui-{rid}")

    def _spawn(self, fn: Callable[[], None], name: str) -> None:
        """Runs fn on a worker thread that _teardown waits for."""
        def work() -> None:
            try:
                fn()
            finally:
                with self._lock:
                    self._workers.discard(threading.current_thread())
        t = threading.Thread(target=work, daemon=True, name=name)
        with self._lock:
            self._workers.add(t)
        t.start()
