package codecgen

// Objects are the JSON objects of package engine's message codec, each
// key once, in the key order of the original agent (agent-core.md §1),
// left out (Omit) exactly where the original leaves it out. Everything
// the codec does with a key is generated from its row here; see Kind for
// what each kind reads, writes and decodes into.
var Objects = []Object{
	{
		Type: "ContentBlock", Recv: "b", Raw: true,
		// The keys a block has depend on its type (its variant).
		Variants: []Variant{
			{Name: "BlockText", Keys: []string{"text", "textSignature"}},
			{Name: "BlockThinking", Keys: []string{"thinking", "thinkingSignature"}},
			{Name: "BlockRedactedThinking", Keys: []string{"data"}},
			{Name: "BlockImage", Keys: []string{"data", "mimeType"}},
			{Name: "BlockToolCall", Keys: []string{"id", "name", "arguments", "thoughtSignature", "intent"}},
		},
		Fields: []Field{
			{Key: "type", Go: "Type", Kind: BlockType},
			{Key: "text", Go: "Text", Kind: String},
			{Key: "textSignature", Go: "TextSignature", Kind: String, Omit: true},
			{Key: "thinking", Go: "Thinking", Kind: String},
			{Key: "thinkingSignature", Go: "ThinkingSignature", Kind: String, Omit: true},
			{Key: "data", Go: "Data", Kind: String},
			{Key: "mimeType", Go: "MimeType", Kind: String, Intern: true},
			{Key: "id", Go: "ID", Kind: String},
			{Key: "name", Go: "Name", Kind: String, Intern: true},
			{Key: "arguments", Go: "Arguments", Kind: RawObject},
			{Key: "thoughtSignature", Go: "ThoughtSignature", Kind: String, Omit: true},
			{Key: "intent", Go: "Intent", Kind: String, Omit: true},
		},
	},
	{
		Type: "Cost", Recv: "c",
		Fields: []Field{
			{Key: "input", Go: "Input", Kind: Float64},
			{Key: "output", Go: "Output", Kind: Float64},
			{Key: "cacheRead", Go: "CacheRead", Kind: Float64},
			{Key: "cacheWrite", Go: "CacheWrite", Kind: Float64},
			{Key: "total", Go: "Total", Kind: Float64},
		},
	},
	{
		Type: "Usage", Recv: "u", Exported: true,
		Fields: []Field{
			{Key: "input", Go: "Input", Kind: Int64},
			{Key: "output", Go: "Output", Kind: Int64},
			{Key: "cacheRead", Go: "CacheRead", Kind: Int64},
			{Key: "cacheWrite", Go: "CacheWrite", Kind: Int64},
			{Key: "totalTokens", Go: "TotalTokens", Kind: Int64},
			{Key: "premiumRequests", Go: "PremiumRequests", Kind: Int64Ptr, Omit: true},
			{Key: "cost", Go: "Cost", Kind: CostObject},
		},
	},
	{
		Type: "FileMention", Recv: "f",
		Fields: []Field{
			{Key: "path", Go: "Path", Kind: String},
			{Key: "content", Go: "Content", Kind: String},
			{Key: "lineCount", Go: "LineCount", Kind: Int64Ptr, Omit: true},
			{Key: "byteSize", Go: "ByteSize", Kind: Int64Ptr, Omit: true},
			{Key: "skippedReason", Go: "SkippedReason", Kind: String, Omit: true},
			{Key: "image", Go: "Image", Kind: BlockPtr, Omit: true},
		},
	},
	{
		Type: "UserMessage", Roles: []string{"user"},
		Fields: []Field{
			{Key: "content", Go: "Content", Kind: Content},
			{Key: "synthetic", Go: "Synthetic", Kind: Bool, Omit: true},
			// A user message the engine did not write may lack it; it is
			// written again without one. The engine's own carry it.
			{Key: "attribution", Go: "Attribution", Kind: Attribution},
			{Key: "providerPayload", Go: "ProviderPayload", Kind: Raw, Omit: true},
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
		},
	},
	{
		Type: "AssistantMessage", Roles: []string{"assistant"},
		// The streaming partial caches the encoding after the content.
		Tail: "api",
		Fields: []Field{
			{Key: "content", Go: "Content", Kind: Blocks},
			{Key: "api", Go: "API", Kind: String, Intern: true},
			{Key: "provider", Go: "Provider", Kind: String, Intern: true},
			{Key: "model", Go: "Model", Kind: String, Intern: true},
			{Key: "responseId", Go: "ResponseID", Kind: String, Omit: true},
			{Key: "usage", Go: "Usage", Kind: UsageObject},
			{Key: "stopReason", Go: "StopReason", Kind: StopReason},
			{Key: "errorMessage", Go: "ErrorMessage", Kind: String, Omit: true},
			{Key: "providerPayload", Go: "ProviderPayload", Kind: Raw, Omit: true},
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
			{Key: "duration", Go: "Duration", Kind: Float64Ptr, Omit: true},
			{Key: "ttft", Go: "TTFT", Kind: Float64Ptr, Omit: true},
		},
	},
	{
		Type: "ToolResultMessage", Roles: []string{"toolResult"},
		Fields: []Field{
			{Key: "toolCallId", Go: "ToolCallID", Kind: String},
			{Key: "toolName", Go: "ToolName", Kind: String, Intern: true},
			{Key: "content", Go: "Content", Kind: Blocks},
			{Key: "details", Go: "Details", Kind: Raw, Omit: true},
			{Key: "isError", Go: "IsError", Kind: Bool},
			{Key: "isWarning", Go: "IsWarning", Kind: BoolPtr, Omit: true},
			{Key: "attribution", Go: "Attribution", Kind: String, Omit: true, Intern: true},
			{Key: "prunedAt", Go: "PrunedAt", Kind: Int64, Omit: true},
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
		},
	},
	{
		Type: "BashExecutionMessage", Roles: []string{"bashExecution"},
		Fields: []Field{
			{Key: "command", Go: "Command", Kind: String},
			{Key: "output", Go: "Output", Kind: String},
			{Key: "exitCode", Go: "ExitCode", Kind: IntPtr, Omit: true},
			{Key: "cancelled", Go: "Cancelled", Kind: Bool},
			{Key: "truncated", Go: "Truncated", Kind: Bool},
			{Key: "meta", Go: "Meta", Kind: Raw, Omit: true},
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
			{Key: "excludeFromContext", Go: "ExcludeFromContext", Kind: OptionalBool, Omit: true},
		},
	},
	{
		Type: "DeveloperMessage", Roles: []string{"developer"},
		Fields: []Field{
			{Key: "content", Go: "Content", Kind: Content},
			{Key: "attribution", Go: "Attribution", Kind: String, Omit: true},
			{Key: "providerPayload", Go: "ProviderPayload", Kind: Raw, Omit: true},
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
		},
	},
	{
		Type: "PythonExecutionMessage", Roles: []string{"pythonExecution"},
		Fields: []Field{
			{Key: "code", Go: "Code", Kind: String},
			{Key: "output", Go: "Output", Kind: String},
			{Key: "exitCode", Go: "ExitCode", Kind: IntPtr, Omit: true},
			{Key: "cancelled", Go: "Cancelled", Kind: Bool},
			{Key: "truncated", Go: "Truncated", Kind: Bool},
			{Key: "meta", Go: "Meta", Kind: Raw, Omit: true},
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
			// The original writes false as well as true: a pointer.
			{Key: "excludeFromContext", Go: "ExcludeFromContext", Kind: BoolPtr, Omit: true},
		},
	},
	{
		// "custom", or the legacy "hookMessage", kept as it was (Legacy).
		Type: "CustomMessage", Roles: []string{"custom", "hookMessage"}, Legacy: "hookMessage",
		Fields: []Field{
			{Key: "customType", Go: "CustomType", Kind: String},
			{Key: "content", Go: "Content", Kind: Content},
			{Key: "display", Go: "Display", Kind: Bool},
			{Key: "details", Go: "Details", Kind: Raw, Omit: true},
			{Key: "attribution", Go: "Attribution", Kind: String, Omit: true},
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
		},
	},
	{
		Type: "BranchSummaryMessage", Roles: []string{"branchSummary"},
		Fields: []Field{
			{Key: "summary", Go: "Summary", Kind: String},
			{Key: "fromId", Go: "FromID", Kind: String},
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
		},
	},
	{
		Type: "CompactionSummaryMessage", Roles: []string{"compactionSummary"},
		Fields: []Field{
			{Key: "summary", Go: "Summary", Kind: String},
			{Key: "shortSummary", Go: "ShortSummary", Kind: String, Omit: true},
			{Key: "tokensBefore", Go: "TokensBefore", Kind: Int64},
			{Key: "providerPayload", Go: "ProviderPayload", Kind: Raw, Omit: true},
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
		},
	},
	{
		Type: "FileMentionMessage", Roles: []string{"fileMention"},
		Fields: []Field{
			{Key: "files", Go: "Files", Kind: FileMentions}, // nil is written as []
			{Key: "timestamp", Go: "Timestamp", Kind: Int64},
		},
	},
}
