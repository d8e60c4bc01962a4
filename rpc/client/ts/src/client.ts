// RpcClient drives `xcsh --mode rpc` from a Node host. Its shape is the pi family's RpcClient
// (packages/coding-agent/src/modes/rpc/rpc-client.ts), so a host switches by changing an import;
// what our protocol adds (host tools, extension UI dialogs, budgets, structured output, the
// commands pi lacks) is added beside it. The behaviour follows the Go client (docs/client.md).

import { type ChildProcess, spawn } from "node:child_process";
import { HostSide, type UiHandler } from "./host.js";
import { readJsonLines, serializeJsonLine } from "./jsonl.js";
import {
	type AgentEvent,
	type ExtensionUiRequest,
	type ExtensionUiResponse,
	type RpcCommand,
	type RpcResponse,
	SCHEMA_HASH,
} from "./protocol.js";
import type {
	AgentMessage,
	BashResult,
	Budget,
	BudgetChange,
	CompactionResult,
	HostTool,
	HostToolDefinition,
	ImageContent,
	MessagesPage,
	Model,
	ModelInfo,
	OutputSchemaEnd,
	PromptOptions,
	RpcSessionState,
	RpcSlashCommand,
	SessionStats,
	ThinkingLevel,
	TodoPhase,
} from "./types.js";

export interface RpcClientOptions {
	/**
	 * The agent to run: the xcsh binary (default $XCSH_BIN, else "xcsh" on PATH). A path ending
	 * in .js, .mjs or .cjs is run with this Node, as pi's client runs its dist/cli.js.
	 */
	cliPath?: string;
	/** Working directory for the agent. */
	cwd?: string;
	/** Environment variables, added to this process's. */
	env?: Record<string, string>;
	/** Provider to use (--provider). */
	provider?: string;
	/** Model to use (--model): an id, provider/id, or a fake provider script. */
	model?: string;
	/** Additional CLI arguments. */
	args?: string[];
	/** Bound of a request's wait for its response, in ms (default 30000; bash waits 310000). */
	requestTimeout?: number;
	/** Bound of start's wait for the ready frame, in ms (default 30000). */
	startTimeout?: number;
	/** How long stop lets the agent finish after its stdin closes, in ms (default 5000). */
	stopGrace?: number;
}

export type RpcEventListener = (event: AgentEvent) => void;

export type { UiHandler };


/** RpcError is a command the agent answered with success:false. */
export class RpcError extends Error {
	constructor(
		/** The command's type. */
		readonly command: string,
		message: string,
		/** A machine-readable code when the agent gives one (session_busy, stale_cursor, …). */
		readonly code?: string,
	) {
		super(message);
		this.name = "RpcError";
	}
}

type Fields = Record<string, unknown>;

// The client reads frames by key, not through protocol.ts's unions: it must compile against the
// generated types whatever their exact shape, and a frame with a key the schema lacks still works.
export type Frame = Record<string, unknown> & { type?: unknown };
interface Reply {
	id?: unknown;
	command: string;
	success: boolean;
	error?: string;
	code?: string;
	data?: unknown;
}

interface Pending {
	type: string;
	resolve: (response: RpcResponse) => void;
	reject: (error: Error) => void;
}

// Commands the agent answers when their work ends, so an id-less parse error is matched to
// another waiting request first (docs/client.md, "Requests and errors").
const ANSWERED_LATE = new Set(["abort", "abort_and_prompt", "bash"]);
// Commands whose failure to start comes as a second response after the acknowledgement.
const STARTS_RUN = new Set(["prompt", "abort_and_prompt", "continue"]);

export class RpcClient {
	private process: ChildProcess | null = null;
	private stopReading: (() => void) | null = null;
	private listeners: RpcEventListener[] = [];
	// Insertion order is request order: the oldest waiting request of a type is the first found.
	private pending = new Map<string, Pending>();
	private requestId = 0;
	private stderr = "";
	private exited: Promise<void> = Promise.resolve();
	private exitError: Error | null = null;
	private ready: Frame | null = null;
	private readyResolve: (() => void) | null = null;
	// Prompts acknowledged whose failure to start may still come; cleared at the next agent_start
	// or agent_end (the prompt started, or was queued into the running run).
	private lateIds = new Set<string>();
	private lateWaiters = new Set<(error: Error, always: boolean) => void>();
	// Host tool calls and dialogs: served by HostSide, which writes its answers through write.
	private host = new HostSide((frame) => this.write(frame));

	constructor(private options: RpcClientOptions = {}) {}

	/** Starts the agent and waits for its ready frame. */
	async start(): Promise<void> {
		if (this.process) throw new Error("Client already started");
		const cliPath = this.options.cliPath ?? process.env.XCSH_BIN ?? "xcsh";
		const args = ["--mode", "rpc"];
		if (this.options.provider) args.push("--provider", this.options.provider);
		if (this.options.model) args.push("--model", this.options.model);
		if (this.options.args) args.push(...this.options.args);
		const [cmd, argv] = /\.[cm]?js$/.test(cliPath) ? [process.execPath, [cliPath, ...args]] : [cliPath, args];

		this.stderr = "";
		this.exitError = null;
		this.ready = null;
		const child = spawn(cmd, argv, {
			cwd: this.options.cwd,
			env: { ...process.env, ...this.options.env },
			stdio: ["pipe", "pipe", "pipe"],
		});
		this.process = child;
		child.stderr!.on("data", (data) => {
			this.stderr += data.toString();
		});
		// A write after the agent closed its stdin fails with EPIPE; the exit handler reports it.
		child.stdin!.on("error", () => {});
		this.stopReading = readJsonLines(child.stdout!, (line) => this.handleLine(line));

		let onReady!: () => void;
		const readyFrame = new Promise<void>((resolve) => (onReady = resolve));
		this.readyResolve = onReady;
		this.exited = new Promise<void>((resolve) => {
			let finished = false;
			const finish = (error: Error) => {
				if (finished || this.process !== child) return resolve();
				finished = true;
				this.exitError = error;
				this.failAll(error);
				resolve();
			};
			child.on("error", (err) => finish(new Error(`Cannot start ${cliPath}: ${err.message}`)));
			// "close", not "exit": it comes after stdout has ended, so the agent's last frames (the
			// answers to requests in flight) are read before the requests still waiting fail.
			child.on("close", (code, signal) =>
				finish(
					new Error(
						`Agent process exited (${signal ?? `code ${code}`}). Stderr: ${this.stderr.trim()}`,
					),
				),
			);
		});
		const timeout = this.options.startTimeout ?? 30000;
		let timer: NodeJS.Timeout | undefined;
		const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeout)));
		const outcome = await Promise.race([readyFrame.then(() => "ready" as const), this.exited.then(() => "exit" as const), timedOut]);
		clearTimeout(timer);
		if (outcome === "ready") return;
		const error =
			outcome === "exit"
				? (this.exitError ?? new Error("Agent process exited"))
				: new Error(`Timeout waiting for the agent's ready frame. Stderr: ${this.stderr}`);
		await this.kill();
		throw error;
	}

	/**
	 * Stops the agent: closes its stdin and gives it stopGrace to finish its running work (the
	 * agent drains a run on stdin EOF), then SIGTERM, then SIGKILL. Waiting requests fail, host
	 * tool and dialog handlers are aborted.
	 */
	async stop(): Promise<void> {
		const child = this.process;
		if (!child) return;
		child.stdin?.end();
		const grace = this.options.stopGrace ?? 5000;
		if (!(await this.exitedWithin(grace))) {
			child.kill("SIGTERM");
			if (!(await this.exitedWithin(2000))) {
				child.kill("SIGKILL");
				await this.exited;
			}
		}
		this.teardown(new Error("Client stopped"));
	}

	private async kill(): Promise<void> {
		const child = this.process;
		if (!child) return;
		child.kill("SIGKILL");
		await this.exited;
		this.teardown(new Error("Client stopped"));
	}

	private async exitedWithin(ms: number): Promise<boolean> {
		let timer: NodeJS.Timeout | undefined;
		const result = await Promise.race([
			this.exited.then(() => true),
			new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
		]);
		clearTimeout(timer);
		return result;
	}

	private teardown(error: Error): void {
		this.stopReading?.();
		this.stopReading = null;
		this.process = null;
		this.failAll(error);
	}

	private failAll(error: Error): void {
		for (const p of this.pending.values()) p.reject(error);
		this.pending.clear();
		this.host.abortAll(error);
		for (const w of [...this.lateWaiters]) w(error, true);
		this.lateIds.clear();
	}

	/** Subscribes to every frame that is not the response to a waiting request. Returns an unsubscribe function. */
	onEvent(listener: RpcEventListener): () => void {
		this.listeners.push(listener);
		return () => {
			const i = this.listeners.indexOf(listener);
			if (i !== -1) this.listeners.splice(i, 1);
		};
	}

	/** The agent's stderr so far (useful for debugging). */
	getStderr(): string {
		return this.stderr;
	}

	/** The agent's ready frame (its version, and the schema hash when it sends one). */
	getReady(): AgentEvent | null {
		return this.ready as AgentEvent | null;
	}

	/** The schema hash the agent's ready frame carries (undefined when it sends none). */
	getSchemaHash(): string | undefined {
		const hash = this.ready?.schemaHash;
		return typeof hash === "string" && hash !== "" ? hash : undefined;
	}

	/**
	 * Whether the agent speaks the protocol this client's types were generated from (its ready
	 * frame's schemaHash equals SCHEMA_HASH); undefined when either side does not say.
	 */
	schemaMatches(): boolean | undefined {
		// Widened to string: the generated SCHEMA_HASH is a literal type.
		const ours: string = SCHEMA_HASH;
		const agent = this.getSchemaHash();
		if (agent === undefined || ours === "") return undefined;
		return agent === ours;
	}

	// =========================================================================
	// Host tools and extension UI (ours)
	// =========================================================================

	/**
	 * Installs the handlers and sends set_host_tools with the tools' definitions (replacing the
	 * previous host tools). If the agent refuses the set, the previous handlers are restored and
	 * the refusal is thrown. Returns the registered names.
	 */
	async registerHostTools(tools: HostTool[]): Promise<string[]> {
		const previous = this.host.tools;
		this.host.tools = new Map(tools.map((t) => [t.name, t.handler]));
		try {
			return await this.setHostTools(tools.map(({ handler: _, ...def }) => def));
		} catch (err) {
			this.host.tools = previous;
			throw err;
		}
	}

	/** The bare set_host_tools command: sends definitions, leaves the handlers alone. */
	async setHostTools(tools: HostToolDefinition[]): Promise<string[]> {
		const response = await this.send("set_host_tools", { tools });
		return this.getData<{ toolNames: string[] }>(response).toolNames;
	}

	/**
	 * Sets the handler of extension UI requests (null removes it). Without a dialog handler every
	 * dialog is answered cancelled at once, so an extension never waits on a host without a UI.
	 */
	onUI(handler: UiHandler | null): void {
		this.host.ui = handler;
	}

	/** Sends an extension_ui_response as it is, for a host that answers dialogs itself from onEvent. */
	sendUiResponse(response: ExtensionUiResponse): void {
		this.write(response);
	}

	// =========================================================================
	// Command methods (pi's, then ours)
	// =========================================================================

	/**
	 * Sends a prompt. Returns once the agent has acknowledged it; use onEvent() for the run and
	 * waitForIdle() to wait for its end. A failure to start (busy, no model, no API key) comes
	 * after the acknowledgement: onEvent listeners get it as a response frame, and a waiting
	 * waitForIdle, collectEvents or promptAndWait rejects with it.
	 */
	async prompt(message: string, images?: ImageContent[], options: PromptOptions = {}): Promise<void> {
		this.getData(await this.send("prompt", { message, images, ...options }));
	}

	/** Queues a steering message for the next turn boundary. */
	async steer(message: string, images?: ImageContent[]): Promise<void> {
		this.getData(await this.send("steer", { message, images }));
	}

	/** Queues a follow-up message for when the run would stop. */
	async followUp(message: string, images?: ImageContent[]): Promise<void> {
		this.getData(await this.send("follow_up", { message, images }));
	}

	/** Aborts the run; resolves once its closing events are written. */
	async abort(): Promise<void> {
		this.getData(await this.send("abort", {}));
	}

	/** Starts a new session; cancelled is true when an extension cancelled it. */
	async newSession(parentSession?: string): Promise<{ cancelled: boolean }> {
		return this.getData(await this.send("new_session", { parentSession }));
	}

	async getState(): Promise<RpcSessionState> {
		return this.getData(await this.send("get_state", {}));
	}

	async setModel(provider: string, modelId: string): Promise<Model> {
		return this.getData(await this.send("set_model", { provider, modelId }));
	}

	async cycleModel(): Promise<{ model: Model; thinkingLevel?: ThinkingLevel; isScoped: boolean } | null> {
		return this.getData(await this.send("cycle_model", {}));
	}

	async getAvailableModels(): Promise<ModelInfo[]> {
		return this.getData<{ models: ModelInfo[] }>(await this.send("get_available_models", {})).models;
	}

	async setThinkingLevel(level: ThinkingLevel): Promise<void> {
		this.getData(await this.send("set_thinking_level", { level }));
	}

	async cycleThinkingLevel(): Promise<{ level: ThinkingLevel } | null> {
		return this.getData(await this.send("cycle_thinking_level", {}));
	}

	async setSteeringMode(mode: "all" | "one-at-a-time"): Promise<void> {
		this.getData(await this.send("set_steering_mode", { mode }));
	}

	async setFollowUpMode(mode: "all" | "one-at-a-time"): Promise<void> {
		this.getData(await this.send("set_follow_up_mode", { mode }));
	}

	async compact(customInstructions?: string): Promise<CompactionResult> {
		return this.getData(await this.send("compact", { customInstructions }));
	}

	async setAutoCompaction(enabled: boolean): Promise<void> {
		this.getData(await this.send("set_auto_compaction", { enabled }));
	}

	async setAutoRetry(enabled: boolean): Promise<void> {
		this.getData(await this.send("set_auto_retry", { enabled }));
	}

	async abortRetry(): Promise<void> {
		this.getData(await this.send("abort_retry", {}));
	}

	/** Runs a shell command; resolves when it ends (bounded by 310 s: the agent stops it at 300). */
	async bash(command: string): Promise<BashResult> {
		return this.getData(await this.send("bash", { command }, 310000));
	}

	async abortBash(): Promise<void> {
		this.getData(await this.send("abort_bash", {}));
	}

	async getSessionStats(): Promise<SessionStats> {
		return this.getData(await this.send("get_session_stats", {}));
	}

	async exportHtml(outputPath?: string): Promise<{ path: string }> {
		return this.getData(await this.send("export_html", { outputPath }));
	}

	async switchSession(sessionPath: string): Promise<{ cancelled: boolean }> {
		return this.getData(await this.send("switch_session", { sessionPath }));
	}

	async fork(entryId: string): Promise<{ text: string; cancelled: boolean }> {
		return this.getData(await this.send("fork", { entryId }));
	}

	async getForkMessages(): Promise<Array<{ entryId: string; text: string }>> {
		return this.getData<{ messages: Array<{ entryId: string; text: string }> }>(
			await this.send("get_fork_messages", {}),
		).messages;
	}

	/** The trimmed text of the last assistant message, or null when there is none. */
	async getLastAssistantText(): Promise<string | null> {
		return this.getData<{ text?: string | null }>(await this.send("get_last_assistant_text", {})).text ?? null;
	}

	async setSessionName(name: string): Promise<void> {
		this.getData(await this.send("set_session_name", { name }));
	}

	async getMessages(): Promise<AgentMessage[]> {
		return this.getData<{ messages: AgentMessage[] }>(await this.send("get_messages", {})).messages;
	}

	async getCommands(): Promise<RpcSlashCommand[]> {
		return this.getData<{ commands: RpcSlashCommand[] }>(await this.send("get_commands", {})).commands;
	}

	/** Aborts the run, then prompts (ours and omp's). */
	async abortAndPrompt(message: string, images?: ImageContent[]): Promise<void> {
		this.getData(await this.send("abort_and_prompt", { message, images }));
	}

	/** Runs the agent again from the context as it stands (a run stopped on its budget resumes). */
	async continue(): Promise<void> {
		this.getData(await this.send("continue", {}));
	}

	async setInterruptMode(mode: "immediate" | "wait"): Promise<void> {
		this.getData(await this.send("set_interrupt_mode", { mode }));
	}

	async branch(entryId: string): Promise<{ text: string; cancelled: boolean }> {
		return this.getData(await this.send("branch", { entryId }));
	}

	async clone(): Promise<{ cancelled: boolean }> {
		return this.getData(await this.send("clone", {}));
	}

	async getBranchMessages(): Promise<Array<{ entryId: string; text: string }>> {
		return this.getData<{ messages: Array<{ entryId: string; text: string }> }>(
			await this.send("get_branch_messages", {}),
		).messages;
	}

	async getMessagesPage(options: { limit?: number; cursor?: string; order?: "asc" | "desc" } = {}): Promise<MessagesPage> {
		return this.getData(await this.send("get_messages_page", options));
	}

	async getAvailableCommands(): Promise<Array<Record<string, unknown>>> {
		return this.getData<{ commands: Array<Record<string, unknown>> }>(await this.send("get_available_commands", {}))
			.commands;
	}

	async getMcpServers(): Promise<Array<Record<string, unknown>>> {
		return this.getData<{ servers: Array<Record<string, unknown>> }>(await this.send("get_mcp_servers", {})).servers;
	}

	async setTodos(phases: TodoPhase[]): Promise<TodoPhase[]> {
		return this.getData<{ todoPhases: TodoPhase[] }>(await this.send("set_todos", { phases })).todoPhases;
	}

	/** Changes the run's limits (docs/rpc.md, "Budgets"); returns the budget as get_state shows it. */
	async setBudget(change: BudgetChange): Promise<Budget> {
		return this.getData(await this.send("set_budget", { ...change }));
	}

	/** Sends any command and returns its data: for commands this client has no method for. */
	async call<T = unknown>(type: string, fields: Fields = {}, timeoutMs?: number): Promise<T> {
		return this.getData<T>(await this.send(type, fields, timeoutMs));
	}

	// =========================================================================
	// Helpers
	// =========================================================================

	/**
	 * Resolves at the next agent_end. Rejects on timeout and when a prompt this client sent fails
	 * to start. (agent_end alone does not mean idle: a retry or compaction may follow; get_state's
	 * isStreaming says.)
	 */
	waitForIdle(timeout = 60000): Promise<void> {
		return this.collectEvents(timeout).then(() => undefined);
	}

	/** Collects every event until the next agent_end (included). */
	collectEvents(timeout = 60000): Promise<AgentEvent[]> {
		return this.collectUntil((frame) => frame.type === "agent_end", timeout);
	}

	// collectUntil collects every event from now until one that last matches (included).
	private collectUntil(last: (frame: Frame) => boolean, timeout: number): Promise<AgentEvent[]> {
		return new Promise((resolve, reject) => {
			const events: AgentEvent[] = [];
			const done = (error?: Error) => {
				clearTimeout(timer);
				unsubscribe();
				this.lateWaiters.delete(fail);
				if (error) reject(error);
				else resolve(events);
			};
			// A failure to start concerns this wait only while no run has started since it began:
			// a second prompt refused as busy does not fail the wait for the run already going.
			let started = false;
			const fail = (error: Error, always: boolean) => {
				if (always || !started) done(error);
			};
			const timer = setTimeout(() => done(new Error(`Timeout collecting events. Stderr: ${this.stderr}`)), timeout);
			const unsubscribe = this.onEvent((event) => {
				events.push(event);
				const frame = event as unknown as Frame;
				if (frame.type === "agent_start") started = true;
				if (last(frame)) done();
			});
			this.lateWaiters.add(fail);
		});
	}

	/**
	 * Sends a prompt with an output schema and resolves with its output_schema_end frame, which
	 * follows agent_end: {success, retries, output} or {success:false, retries, errors}.
	 */
	async promptForOutput(
		message: string,
		outputSchema: object,
		options: { images?: ImageContent[]; timeout?: number } = {},
	): Promise<OutputSchemaEnd> {
		const events = this.collectUntil((frame) => frame.type === "output_schema_end", options.timeout ?? 60000);
		try {
			await this.prompt(message, options.images, { outputSchema });
		} catch (err) {
			events.catch(() => {});
			throw err;
		}
		return (await events).at(-1) as unknown as OutputSchemaEnd;
	}

	/** Sends a prompt and collects its events until agent_end. */
	async promptAndWait(
		message: string,
		images?: ImageContent[],
		timeout = 60000,
		options: PromptOptions = {},
	): Promise<AgentEvent[]> {
		const events = this.collectEvents(timeout);
		try {
			await this.prompt(message, images, options);
		} catch (err) {
			events.catch(() => {});
			throw err;
		}
		return events;
	}

	// =========================================================================
	// Internal
	// =========================================================================

	private handleLine(line: string): void {
		if (line.trim() === "") return;
		let frame: Frame;
		try {
			frame = JSON.parse(line);
		} catch {
			return; // not a frame: the agent writes only JSON, so this is noise from elsewhere
		}
		if (frame === null || typeof frame !== "object") return;
		if (frame.type === "response" && this.settle(frame as unknown as Reply)) return;
		switch (frame.type) {
			case "ready":
				this.ready = frame;
				this.readyResolve?.();
				break;
			case "agent_start":
			case "agent_end":
				this.lateIds.clear();
				break;
			case "host_tool_call":
				this.host.call(frame);
				break;
			case "host_tool_cancel":
				this.host.cancelCall(String(frame.targetId));
				break;
			case "extension_ui_request":
				this.host.uiRequest(frame as unknown as ExtensionUiRequest);
				break;
		}
		for (const listener of [...this.listeners]) {
			try {
				listener(frame as unknown as AgentEvent);
			} catch {
				// A listener's failure is its own; the reader goes on.
			}
		}
	}

	// settle resolves the request a response answers; false when it answers none (an event).
	private settle(response: Reply): boolean {
		const id = response.id;
		if (typeof id === "string") {
			const p = this.pending.get(id);
			if (p) {
				this.pending.delete(id);
				if (response.success && STARTS_RUN.has(p.type)) this.lateIds.add(id);
				p.resolve(response as unknown as RpcResponse);
				return true;
			}
			if (this.lateIds.has(id) && !response.success) {
				this.lateIds.delete(id);
				const error = new RpcError(response.command, String(response.error), response.code);
				for (const w of [...this.lateWaiters]) w(error, false);
			}
			return false;
		}
		if (id !== undefined || response.success) return false;
		// The agent answers an unknown command and a parse failure without an id: match them to
		// the request they must belong to, so nobody waits out a timeout.
		let match: [string, Pending] | undefined;
		if (response.command === "parse") {
			const all = [...this.pending.entries()];
			match = all.find(([, p]) => !ANSWERED_LATE.has(p.type)) ?? all[0];
		} else if (String(response.error).startsWith("Unknown command: ")) {
			match = [...this.pending.entries()].find(([, p]) => p.type === response.command);
		}
		if (!match) return false;
		this.pending.delete(match[0]);
		match[1].resolve(response as unknown as RpcResponse);
		return true;
	}

	private write(frame: object): void {
		const stdin = this.process?.stdin;
		if (!stdin || stdin.destroyed || stdin.writableEnded) return;
		stdin.write(serializeJsonLine(frame));
	}

	private send(type: string, fields: Fields, timeoutMs?: number): Promise<RpcResponse> {
		const stdin = this.process?.stdin;
		if (this.exitError || !stdin || stdin.writableEnded) {
			return Promise.reject(this.exitError ?? new Error("Client not started"));
		}
		const id = `req_${++this.requestId}`;
		const command = { id, type, ...dropUndefined(fields) } as unknown as RpcCommand;
		const timeout = timeoutMs ?? this.options.requestTimeout ?? 30000;
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				this.pending.delete(id);
				reject(new Error(`Timeout waiting for response to ${type}. Stderr: ${this.stderr}`));
			}, timeout);
			this.pending.set(id, {
				type,
				resolve: (r) => {
					clearTimeout(timer);
					resolve(r);
				},
				reject: (e) => {
					clearTimeout(timer);
					reject(e);
				},
			});
			stdin.write(serializeJsonLine(command));
		});
	}

	private getData<T>(response: RpcResponse): T {
		const reply = response as unknown as Reply;
		if (!reply.success) throw new RpcError(reply.command, String(reply.error), reply.code);
		return reply.data as T;
	}
}

function dropUndefined(fields: Fields): Fields {
	const out: Fields = {};
	for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
	return out;
}
