// @xcsh-go/rpc-client: a typed client for `xcsh --mode rpc`, shaped like the pi family's
// RpcClient (docs/client.md, "TypeScript"). The frame types come from protocol.ts, which
// `xcsh schema --format typescript` generates.

export { RpcClient, RpcError } from "./client.js";
export type { RpcClientOptions, RpcEventListener, UiHandler } from "./client.js";
export { readJsonLines, serializeJsonLine } from "./jsonl.js";
export {
	PROTOCOL_VERSION,
	SCHEMA_HASH,
	type AgentEvent,
	type ExtensionUiRequest,
	type ExtensionUiResponse,
	type RpcCommand,
	type RpcResponse,
} from "./protocol.js";
export type * from "./types.js";

/** The version of this client package. */
export const CLIENT_VERSION = "0.1.0";
