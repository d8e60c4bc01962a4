// PLACEHOLDER: replaced by xcsh schema output (`xcsh schema --format typescript`).
//
// Until the generator lands this file is written by hand. It exports exactly the names the
// generator promises (PROTOCOL_VERSION, SCHEMA_HASH, RpcCommand, RpcResponse, AgentEvent,
// ExtensionUiRequest, ExtensionUiResponse), and the rest of the client imports only these names,
// so the generated file replaces it without a change elsewhere. The types are deliberately
// loose: the wire contract is docs/rpc.md.

/** The protocol version this client was built against ("" until the schema names one). */
export const PROTOCOL_VERSION: string = "";

/** The hash of the schema this client was built against ("" until the schema names one). */
export const SCHEMA_HASH: string = "";

/** A command the host writes on the agent's stdin: an object with a literal `type`. */
export type RpcCommand = { id?: string | number; type: string; [field: string]: unknown };

/** The agent's answer to a command. */
export type RpcResponse =
	| { id?: unknown; type: "response"; command: string; success: true; data?: unknown }
	| { id?: unknown; type: "response"; command: string; success: false; error: string; code?: string };

/** Any frame the agent writes that is not a response: run events, host tool frames, UI requests. */
export type AgentEvent = { type: string; [field: string]: unknown };

/** A dialog or notification an extension (or a confirmation policy) asks the host to show. */
export type ExtensionUiRequest =
	| { type: "extension_ui_request"; id: string; method: "select"; title: string; options: string[]; timeout?: number }
	| { type: "extension_ui_request"; id: string; method: "confirm"; title: string; message: string; timeout?: number }
	| { type: "extension_ui_request"; id: string; method: "input"; title: string; placeholder?: string; timeout?: number }
	| { type: "extension_ui_request"; id: string; method: "editor"; title: string; prefill?: string }
	| { type: "extension_ui_request"; id: string; method: "cancel"; targetId: string }
	| {
			type: "extension_ui_request";
			id: string;
			method: "notify";
			message: string;
			notifyType?: "info" | "warning" | "error";
	  }
	| { type: "extension_ui_request"; id: string; method: "setStatus"; statusKey: string; statusText?: string }
	| {
			type: "extension_ui_request";
			id: string;
			method: "setWidget";
			widgetKey: string;
			widgetLines?: string[];
			widgetPlacement?: "aboveEditor" | "belowEditor";
	  }
	| { type: "extension_ui_request"; id: string; method: "setTitle"; title: string }
	| { type: "extension_ui_request"; id: string; method: "set_editor_text"; text: string };

/** The host's answer to a dialog. */
export type ExtensionUiResponse =
	| { type: "extension_ui_response"; id: string; value: string }
	| { type: "extension_ui_response"; id: string; confirmed: boolean }
	| { type: "extension_ui_response"; id: string; cancelled: true; timedOut?: boolean };
