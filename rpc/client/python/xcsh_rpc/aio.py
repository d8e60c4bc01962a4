"""AsyncRpcClient: the asyncio client, on asyncio.subprocess.

One reader task reads the agent's stdout, resolves waiting requests and calls the event
listeners in order; each host tool call and dialog runs as a task of its own, cancelled when
the agent withdraws it. The method set is the sync client's; every command method is a
coroutine.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Callable, Mapping

from . import _core
from ._core import ClientClosed, RpcError
from .client import EventListener, HostTool, HostToolContext
from .protocol import AgentEvent, ExtensionUiRequest, ExtensionUiResponse


class AsyncRpcClient(_core.Commands):
    """Drives `xcsh --mode rpc` from asyncio (docs/client.md, "Python"). Handlers may be
    plain functions or coroutine functions."""

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
        self._proc: asyncio.subprocess.Process | None = None
        # Everything below is touched only on the event loop's thread: no locks.
        self._pending: dict[str, tuple[str, asyncio.Future[Any]]] = {}  # insertion order is request order
        self._listeners: list[EventListener] = []
        self._next_id = 0
        self._stderr: list[str] = []
        self._ready: AgentEvent | None = None
        self._ready_future: asyncio.Future[None] | None = None
        self._exit_error: Exception | None = None
        self._late_ids: set[str] = set()
        self._late_waiters: set[Callable[[Exception, bool], None]] = set()
        self._host_tools: dict[str, Callable[..., Any]] = {}
        self._tasks: dict[str, asyncio.Task[Any]] = {}  # host tool calls and dialogs by request id
        self._ui: Any = None
        self._readers: list[asyncio.Task[Any]] = []

    # lifecycle

    async def start(self) -> None:
        """Starts the agent and waits for its ready frame."""
        if self._proc is not None:
            raise RuntimeError("Client already started")
        self._exit_error = None
        loop = asyncio.get_running_loop()
        self._ready_future = loop.create_future()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self._argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=self._cwd, env=_core.environment(self._env))
        except OSError as e:
            raise ClientClosed(f"Cannot start {self._argv[0]}: {e}") from e
        self._readers = [asyncio.create_task(self._read_stdout()), asyncio.create_task(self._read_stderr())]
        try:
            await asyncio.wait_for(asyncio.shield(self._ready_future), self.start_timeout)
        except asyncio.TimeoutError:
            await self._kill()
            raise ClientClosed(f"Timeout waiting for the agent's ready frame. Stderr: {self.get_stderr()}") from None
        except ClientClosed:
            await self._kill()
            raise

    async def stop(self) -> None:
        """Closes the agent's stdin and gives it stop_grace seconds to finish (the agent drains
        a run on stdin EOF), then SIGTERM, then SIGKILL. Waiting requests fail with
        ClientClosed; handler tasks are cancelled."""
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), self.stop_grace)
        except asyncio.TimeoutError:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 2.0)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
        await self._teardown()

    async def _kill(self) -> None:
        if self._proc is not None:
            if self._proc.returncode is None:
                self._proc.kill()
            await self._proc.wait()
            await self._teardown()

    async def _teardown(self) -> None:
        await asyncio.gather(*self._readers, return_exceptions=True)
        self._fail_all(ClientClosed("Client stopped"))
        tasks = list(self._tasks.values())
        self._tasks.clear()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._proc = None

    async def __aenter__(self) -> AsyncRpcClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def on_event(self, listener: EventListener) -> Callable[[], None]:
        """Subscribes to every frame that is not the response to a waiting request; listeners
        run on the reader task, in order, and must not block. Returns an unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)
        return unsubscribe

    def get_stderr(self) -> str:
        """The agent's stderr so far."""
        return "".join(self._stderr)

    def get_ready(self) -> AgentEvent | None:
        """The agent's ready frame."""
        return self._ready

    # host tools and extension UI

    async def register_host_tools(self, tools: list[HostTool | dict]) -> list[str]:
        """Installs the handlers and sends set_host_tools; if the agent refuses the set the
        previous handlers are restored and RpcError raised. Returns the registered names."""
        defs, handlers = _core.tool_definitions(tools)
        previous, self._host_tools = self._host_tools, handlers
        try:
            return await self.set_host_tools(defs)
        except BaseException:
            self._host_tools = previous
            raise

    def on_ui(self, handler: Any) -> None:
        """Sets the handler of extension UI requests (None removes it): an object with
        dialog(request, cancelled) (a function or coroutine function; cancelled is an
        asyncio.Event, and the task is also cancelled when the agent cancels the dialog)
        and/or notify(request), or a plain function used as dialog. Without a dialog handler
        every dialog is answered cancelled at once."""
        self._ui = handler

    def send_ui_response(self, response: ExtensionUiResponse) -> None:
        """Sends an extension_ui_response as it is."""
        self._write(dict(response))

    # waiting for runs

    async def collect_events(self, timeout: float = 60.0) -> list[AgentEvent]:
        """Collects every event from now until the next agent_end (included). Raises
        TimeoutError, or RpcError when a prompt fails to start before any run started."""
        return await self._collect(timeout, None)

    async def _collect(self, timeout: float, send: Callable[[], Any] | None,
                       last: str = "agent_end") -> list[AgentEvent]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[list[AgentEvent]] = loop.create_future()
        events: list[AgentEvent] = []
        started = False

        def on_event(event: AgentEvent) -> None:
            nonlocal started
            events.append(event)
            if event.get("type") == "agent_start":
                started = True
            if event.get("type") == last and not done.done():
                done.set_result(events)

        # A failure to start concerns this wait only while no run has started since it began.
        def on_fail(error: Exception, always: bool) -> None:
            if (always or not started) and not done.done():
                done.set_exception(error)

        unsubscribe = self.on_event(on_event)
        self._late_waiters.add(on_fail)
        try:
            if send is not None:
                await send()
            try:
                return await asyncio.wait_for(done, timeout)
            except asyncio.TimeoutError:
                raise TimeoutError(f"Timeout collecting events. Stderr: {self.get_stderr()}") from None
        finally:
            unsubscribe()
            self._late_waiters.discard(on_fail)

    async def wait_for_idle(self, timeout: float = 60.0) -> None:
        """Waits for the next agent_end."""
        await self.collect_events(timeout)

    async def prompt_and_wait(self, message: str, images: list[dict] | None = None, timeout: float = 60.0,
                              **options: Any) -> list[AgentEvent]:
        """Sends a prompt and collects its events until agent_end."""
        return await self._collect(timeout, lambda: self.prompt(message, images, **options))

    async def prompt_for_output(self, message: str, output_schema: dict, images: list[dict] | None = None,
                                timeout: float = 60.0) -> AgentEvent:
        """Sends a prompt with an output schema and returns its output_schema_end event."""
        events = await self._collect(timeout, lambda: self.prompt(message, images, output_schema=output_schema),
                                     "output_schema_end")
        return events[-1]

    # internals

    async def _request(self, type_: str, fields: Mapping[str, Any], pick: Callable[[Any], Any] | None = None,
                       timeout: float | None = None) -> Any:
        if self._exit_error is not None:
            raise self._exit_error
        if self._proc is None:
            raise ClientClosed("Client not started")
        self._next_id += 1
        rid = f"req_{self._next_id}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = (type_, future)
        self._write(_core.command(rid, type_, fields))
        try:
            response = await asyncio.wait_for(asyncio.shield(future), timeout or self.request_timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"Timeout waiting for response to {type_}. Stderr: {self.get_stderr()}") from None
        finally:
            self._pending.pop(rid, None)
        data = _core.data_of(response)
        return pick(data) if pick else data

    def _write(self, frame: Mapping[str, Any]) -> None:
        # StreamWriter.write buffers without blocking, one whole frame per call, so frames
        # never interleave; the transport drains the buffer as the agent reads.
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            return
        proc.stdin.write((json.dumps(frame, separators=(",", ":"), ensure_ascii=False) + "\n").encode())

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while chunk := await self._proc.stderr.read(65536):
            self._stderr.append(chunk.decode(errors="replace"))

    async def _read_stdout(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        # Split on LF ourselves: StreamReader.readline has a 64 KiB limit, and a frame (a
        # message_update snapshot, get_messages) may be far longer.
        buffer = b""
        while chunk := await proc.stdout.read(1 << 16):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                self._handle_line(line)
        if buffer:
            self._handle_line(buffer)
        code = await proc.wait()
        self._exit_error = ClientClosed(f"Agent process exited (code {code}). Stderr: {self.get_stderr().strip()}")
        if self._ready_future is not None and not self._ready_future.done():
            self._ready_future.set_exception(self._exit_error)
        self._fail_all(self._exit_error)

    def _handle_line(self, line: bytes) -> None:
        line = line.rstrip(b"\r")
        if not line.strip():
            return
        try:
            frame = json.loads(line)
        except ValueError:
            return  # not a frame
        if isinstance(frame, dict):
            self._handle(frame)

    def _fail_all(self, error: Exception) -> None:
        pending, self._pending = self._pending, {}
        for _, future in pending.values():
            if not future.done():
                future.set_exception(error)
        for task in self._tasks.values():
            task.cancel()
        for w in list(self._late_waiters):
            w(error, True)
        self._late_ids.clear()

    def _handle(self, frame: AgentEvent) -> None:
        kind = frame.get("type")
        if kind == "response" and self._settle(frame):
            return
        if kind == "ready":
            self._ready = frame
            if self._ready_future is not None and not self._ready_future.done():
                self._ready_future.set_result(None)
        elif kind in ("agent_start", "agent_end"):
            self._late_ids.clear()
        elif kind == "host_tool_call":
            self._run_host_tool(frame)
        elif kind == "host_tool_cancel":
            task = self._tasks.get(str(frame.get("targetId")))
            if task is not None:
                task.cancel()
        elif kind == "extension_ui_request":
            self._handle_ui(frame)  # type: ignore[arg-type]
        for listener in list(self._listeners):
            try:
                listener(frame)
            except Exception as e:  # a listener's failure is its own; the reader goes on
                _core.warn(f"event listener failed: {e!r}")

    def _settle(self, response: Any) -> bool:
        """Resolves the request a response answers; False when it answers none (an event)."""
        rid = response.get("id")
        if isinstance(rid, str):
            entry = self._pending.pop(rid, None)
            if entry is None:
                if rid in self._late_ids and not response.get("success"):
                    self._late_ids.discard(rid)
                    error = RpcError(str(response.get("command")), str(response.get("error")), response.get("code"))
                    for w in list(self._late_waiters):
                        w(error, False)
                return False
            if response.get("success") and entry[0] in _core.STARTS_RUN:
                self._late_ids.add(rid)
        else:
            match = _core.match_idless(response, ((k, v[0]) for k, v in self._pending.items()))
            if match is None:
                return False
            entry = self._pending.pop(match)
        if not entry[1].done():
            entry[1].set_result(response)
        return True

    def _run_host_tool(self, frame: AgentEvent) -> None:
        cid = str(frame.get("id"))
        name = str(frame.get("toolName"))
        handler = self._host_tools.get(name)
        cancelled = asyncio.Event()

        def update(partial: Any) -> None:
            if not cancelled.is_set():
                self._write({"type": "host_tool_update", "id": cid, "partialResult": _core.partial_result(partial)})

        async def run() -> None:
            try:
                if handler is None:
                    result = _core.text_result(f'Host tool "{name}" is not registered', True)
                else:
                    try:
                        out = handler(frame.get("arguments") or {},
                                      HostToolContext(str(frame.get("toolCallId")), update, cancelled))
                        if inspect.isawaitable(out):
                            out = await out
                        result = _core.tool_result(out)
                    except asyncio.CancelledError:
                        raise
                    except Exception as e:
                        result = _core.text_result(str(e), True)
            except asyncio.CancelledError:
                cancelled.set()
                return  # withdrawn: the agent has already failed the call
            finally:
                self._tasks.pop(cid, None)
            is_error = result.pop("isError", False)
            reply: dict[str, Any] = {"type": "host_tool_result", "id": cid, "result": result}
            if is_error:
                reply["isError"] = True  # isError belongs to the frame (docs/rpc.md, "Host tools")
            self._write(reply)

        self._tasks[cid] = asyncio.create_task(run())

    def _handle_ui(self, request: ExtensionUiRequest) -> None:
        method = request.get("method")
        if method == "cancel":
            task = self._tasks.get(str(request.get("targetId")))
            if task is not None:
                task.cancel()
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
        cancelled = asyncio.Event()
        timeout = request.get("timeout")

        async def ask() -> Any:
            out = dialog(request, cancelled)
            return await out if inspect.isawaitable(out) else out

        async def run() -> None:
            try:
                if isinstance(timeout, (int, float)) and timeout > 0:
                    try:
                        body = _core.answer_body(await asyncio.wait_for(ask(), timeout / 1000))
                    except asyncio.TimeoutError:
                        cancelled.set()
                        body = {"cancelled": True, "timedOut": True}
                else:
                    body = _core.answer_body(await ask())
            except asyncio.CancelledError:
                cancelled.set()
                return  # the agent cancelled the dialog: nothing is answered
            except Exception:
                body = {"cancelled": True}
            finally:
                self._tasks.pop(rid, None)
            self._write({"type": "extension_ui_response", "id": rid, **body})

        self._tasks[rid] = asyncio.create_task(run())
