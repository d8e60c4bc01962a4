// HostSide serves what the agent asks of the host: host tool calls (host_tool_call, withdrawn
// by host_tool_cancel) and extension UI requests (dialogs, withdrawn by a cancel request, and
// notifications). Each call and dialog runs on its own promise; answers go out through write.

import type { Frame } from "./client.js";
import type { ExtensionUiRequest, ExtensionUiResponse } from "./protocol.js";
import type { HostToolHandler, HostToolResult, UiAnswer } from "./types.js";

/** UiHandler answers extension_ui_request frames (onUI). */
export interface UiHandler {
	/**
	 * Answers a dialog (select, confirm, input, editor). signal is aborted when the agent
	 * cancels the dialog (its timeout, an abort), the request's own timeout passes, or the
	 * client stops; nothing is sent for an aborted dialog except on its own timeout.
	 */
	dialog?(request: ExtensionUiRequest, signal: AbortSignal): UiAnswer | Promise<UiAnswer>;
	/** Receives the fire-and-forget requests (notify, setStatus, setWidget, setTitle, set_editor_text), in order. */
	notify?(request: ExtensionUiRequest): void;
}

const DIALOGS = new Set(["select", "confirm", "input", "editor"]);

export class HostSide {
	/** The handlers by tool name (registerHostTools replaces the map). */
	tools = new Map<string, HostToolHandler>();
	/** The UI handler (onUI). */
	ui: UiHandler | null = null;
	// The calls and dialogs running, by the agent's request id, to abort on cancel or stop.
	private calls = new Map<string, AbortController>();
	private dialogs = new Map<string, AbortController>();

	constructor(private write: (frame: object) => void) {}

	/** Aborts every running call and dialog (the client stopped); nothing is answered. */
	abortAll(reason: Error): void {
		for (const c of this.calls.values()) c.abort(reason);
		this.calls.clear();
		for (const c of this.dialogs.values()) c.abort(reason);
		this.dialogs.clear();
	}

	/** Withdraws a call (host_tool_cancel): its handler's signal aborts and nothing is sent. */
	cancelCall(id: string): void {
		this.calls.get(id)?.abort(new Error("Host tool call cancelled by the agent"));
	}

	/** Runs the handler of a host_tool_call and sends its host_tool_result. */
	call(frame: Frame): void {
		const id = String(frame.id);
		const name = String(frame.toolName);
		const handler = this.tools.get(name);
		const controller = new AbortController();
		this.calls.set(id, controller);
		const signal = controller.signal;
		const update = (partial: string | object) => {
			if (signal.aborted) return;
			const partialResult = typeof partial === "string" ? { content: [{ type: "text", text: partial }] } : partial;
			this.write({ type: "host_tool_update", id, partialResult });
		};
		const run = async (): Promise<HostToolResult> => {
			if (!handler) return errorResult(`Host tool "${name}" is not registered`);
			try {
				const out = await handler(frame.arguments ?? {}, { signal, toolCallId: String(frame.toolCallId), update });
				if (typeof out === "string") return { content: [{ type: "text", text: out }], details: {} };
				return { ...out, content: out.content ?? [], details: out.details ?? {} };
			} catch (err) {
				return errorResult(err instanceof Error ? err.message : String(err));
			}
		};
		void run().then((result) => {
			this.calls.delete(id);
			// A withdrawn call gets no answer: the agent has already failed it.
			if (signal.aborted) return;
			// isError belongs to the frame, not the result (docs/rpc.md, "Host tools").
			const { isError, ...body } = result;
			this.write({ type: "host_tool_result", id, result: body, ...(isError ? { isError: true } : {}) });
		});
	}

	/** Serves an extension_ui_request: answers a dialog, passes a notification on, or cancels. */
	uiRequest(request: ExtensionUiRequest): void {
		const req = request as unknown as { id: string; method: string; targetId?: string; timeout?: number };
		if (req.method === "cancel") {
			this.dialogs.get(String(req.targetId))?.abort(new Error("Dialog cancelled by the agent"));
			return;
		}
		if (!DIALOGS.has(req.method)) {
			try {
				this.ui?.notify?.(request);
			} catch {
				// The handler's failure is its own.
			}
			return;
		}
		const answer = (body: Record<string, unknown>) =>
			this.write({ type: "extension_ui_response", id: req.id, ...body } as unknown as ExtensionUiResponse);
		const dialog = this.ui?.dialog?.bind(this.ui);
		if (!dialog) {
			// No UI: the default at once, so an extension never waits on a host that cannot ask.
			answer({ cancelled: true });
			return;
		}
		const controller = new AbortController();
		this.dialogs.set(req.id, controller);
		// One answer per dialog: the handler's, or the timeout's when it passes first (a handler
		// that ignores its signal still leaves the extension an answer).
		let answered = false;
		const answerOnce = (body: Record<string, unknown>) => {
			if (answered) return;
			answered = true;
			answer(body);
		};
		const timer =
			typeof req.timeout === "number" && req.timeout > 0
				? setTimeout(() => {
						this.dialogs.delete(req.id);
						controller.abort(new Error("Dialog timed out"));
						answerOnce({ cancelled: true, timedOut: true });
					}, req.timeout)
				: undefined;
		void (async () => {
			let body: Record<string, unknown>;
			try {
				body = toResponseBody(await dialog(request, controller.signal));
			} catch {
				body = { cancelled: true };
			}
			clearTimeout(timer);
			this.dialogs.delete(req.id);
			if (!controller.signal.aborted) answerOnce(body);
		})();
	}
}

function errorResult(text: string): HostToolResult {
	return { content: [{ type: "text", text }], details: {}, isError: true };
}

function toResponseBody(answer: UiAnswer): Record<string, unknown> {
	if (answer === null || answer === undefined) return { cancelled: true };
	if (typeof answer === "string") return { value: answer };
	if (typeof answer === "boolean") return { confirmed: answer };
	return { ...answer };
}
