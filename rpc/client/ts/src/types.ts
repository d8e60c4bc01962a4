// The shapes of the client's arguments and results, as docs/rpc.md describes them. They are
// written for the client's method signatures and kept open (extra keys allowed), so an agent
// that adds a field never breaks a host; the frames themselves are typed by protocol.ts.

/** A thinking level; "inherit" unsets it. */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "inherit";

/** A text part of a message or a tool result. */
export interface TextContent {
	type: "text";
	text: string;
}

/** An image part: base64 data and its MIME type. */
export interface ImageContent {
	type: "image";
	data: string;
	mimeType: string;
}

/** A model as get_state, set_model and get_available_models describe it. */
export interface Model {
	id: string;
	name?: string;
	api?: string;
	provider: string;
	baseUrl?: string;
	reasoning?: boolean;
	input?: string[];
	contextWindow?: number;
	maxTokens?: number;
	[field: string]: unknown;
}

/** pi's name for a model's summary in getAvailableModels. */
export type ModelInfo = Model;

/** A message of the context (user, assistant, toolResult, and the agent's own kinds). */
export interface AgentMessage {
	role: string;
	content?: unknown;
	timestamp?: number;
	[field: string]: unknown;
}

/** The get_state object (docs/rpc.md, "get_state"). */
export interface RpcSessionState {
	model?: Model;
	thinkingLevel?: string;
	isStreaming: boolean;
	isCompacting: boolean;
	steeringMode: "all" | "one-at-a-time";
	followUpMode: "all" | "one-at-a-time";
	interruptMode?: "immediate" | "wait";
	sessionFile?: string;
	sessionId: string;
	sessionName?: string;
	autoCompactionEnabled: boolean;
	messageCount: number;
	pendingMessageCount: number;
	queuedMessageCount?: number;
	budget?: Budget;
	[field: string]: unknown;
}

/** The result of the bash command. */
export interface BashResult {
	output: string;
	exitCode?: number;
	cancelled: boolean;
	truncated: boolean;
	fullOutputPath?: string;
	[field: string]: unknown;
}

/** The result of compact. */
export interface CompactionResult {
	summary: string;
	firstKeptEntryId?: string;
	tokensBefore?: number;
	[field: string]: unknown;
}

/** get_session_stats. */
export interface SessionStats {
	sessionId: string;
	sessionFile?: string;
	userMessages: number;
	assistantMessages: number;
	toolCalls: number;
	toolResults: number;
	totalMessages: number;
	tokens: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
	cost: number;
	[field: string]: unknown;
}

/** A command get_commands lists (extension commands, prompt templates, skills). */
export interface RpcSlashCommand {
	name: string;
	description?: string;
	source: string;
	[field: string]: unknown;
}

/** A run's limits and what it spent (set_budget, get_state.budget). */
export interface Budget {
	maxCost?: number;
	maxTokens?: number;
	maxTimeMs?: number;
	spent?: { cost: number; tokens: number; timeMs: number };
	[field: string]: unknown;
}

/** set_budget's fields: a number sets a limit, 0 or null removes it, an absent key keeps it. */
export interface BudgetChange {
	maxCost?: number | null;
	maxTokens?: number | null;
	maxTimeMs?: number | null;
}

/** One page of get_messages_page. */
export interface MessagesPage {
	messages: AgentMessage[];
	totalMessages: number;
	nextCursor?: string;
}

/** A todo phase (set_todos). */
export interface TodoPhase {
	id: string;
	name: string;
	tasks: Array<{ id: string; content: string; status: string; notes?: string }>;
}

/** prompt's options beyond pi's (message, images). */
export interface PromptOptions {
	/** While a run is active, queue the message instead of failing busy. */
	streamingBehavior?: "steer" | "followUp";
	/** A JSON Schema the final answer must satisfy (output_schema_end carries it). */
	outputSchema?: object;
}

/** The output_schema_end event: the structured answer, or why there is none. */
export interface OutputSchemaEnd {
	type: "output_schema_end";
	success: boolean;
	retries: number;
	output?: unknown;
	errors?: string[];
}

/** A host tool's result as the host sends it back. */
export interface HostToolResult {
	content: Array<TextContent | ImageContent>;
	details?: unknown;
	isError?: boolean;
}

/** What a host tool call's handler gets besides the model's arguments. */
export interface HostToolContext {
	/** Aborted when the agent withdraws the call (host_tool_cancel) or the client stops. */
	signal: AbortSignal;
	/** The model's tool call id. */
	toolCallId: string;
	/** Sends a partial result (host_tool_update): a text, or a result object. */
	update(partial: string | { content: Array<TextContent | ImageContent>; details?: unknown }): void;
}

/**
 * A host tool's handler. A string return is a text result; a thrown error is an error result
 * (isError) with the error's message.
 */
export type HostToolHandler = (
	args: any,
	ctx: HostToolContext,
) => HostToolResult | string | Promise<HostToolResult | string>;

/** A host tool definition (set_host_tools). */
export interface HostToolDefinition {
	name: string;
	label?: string;
	description: string;
	/** A JSON Schema object for the arguments. */
	parameters: object;
	/** Registered but not offered to the model. */
	hidden?: boolean;
}

/** A host tool with the handler that serves its calls. */
export interface HostTool extends HostToolDefinition {
	handler: HostToolHandler;
}

/**
 * A dialog's answer: a string is a value (select, input, editor), a boolean a confirmation,
 * null or undefined the default (cancelled); an object is sent as it is.
 */
export type UiAnswer =
	| string
	| boolean
	| null
	| undefined
	| { value: string }
	| { confirmed: boolean }
	| { cancelled: true; timedOut?: boolean };
