package otel

import "go.opentelemetry.io/otel/attribute"

// The attribute keys of the GenAI semantic conventions (v1.41) this
// package writes, as constants: importing the conventions' generated
// package would run its initialisers at every start of the agent, tracing
// or not.
const (
	keyOperation        attribute.Key = "gen_ai.operation.name"
	keyAgentName        attribute.Key = "gen_ai.agent.name"
	keyAgentVersion     attribute.Key = "gen_ai.agent.version"
	keyConversation     attribute.Key = "gen_ai.conversation.id"
	keyProvider         attribute.Key = "gen_ai.provider.name"
	keyRequestModel     attribute.Key = "gen_ai.request.model"
	keyRequestMaxTokens attribute.Key = "gen_ai.request.max_tokens"
	keyResponseModel    attribute.Key = "gen_ai.response.model"
	keyResponseID       attribute.Key = "gen_ai.response.id"
	keyFinishReasons    attribute.Key = "gen_ai.response.finish_reasons"
	keyInputTokens      attribute.Key = "gen_ai.usage.input_tokens"
	keyOutputTokens     attribute.Key = "gen_ai.usage.output_tokens"
	keyCacheRead        attribute.Key = "gen_ai.usage.cache_read.input_tokens"
	keyCacheCreation    attribute.Key = "gen_ai.usage.cache_creation.input_tokens"
	keyInputMessages    attribute.Key = "gen_ai.input.messages"
	keyOutputMessages   attribute.Key = "gen_ai.output.messages"
	keySystem           attribute.Key = "gen_ai.system_instructions"
	keyToolName         attribute.Key = "gen_ai.tool.name"
	keyToolCallID       attribute.Key = "gen_ai.tool.call.id"
	keyToolType         attribute.Key = "gen_ai.tool.type"
	keyToolArguments    attribute.Key = "gen_ai.tool.call.arguments"
	keyToolResult       attribute.Key = "gen_ai.tool.call.result"
	keyErrorType        attribute.Key = "error.type"
	keySessionID        attribute.Key = "session.id"
	keyServiceName      attribute.Key = "service.name"
	keyServiceVersion   attribute.Key = "service.version"
)
