// Package provider is what the adapters under it (openai, anthropic,
// gemini, ollama) share, and a new one starts from (docs/providers.md): the
// StreamWriter that keeps the engine's block contract, the checks on a
// streamed HTTP body (NotAStream, WatchLines), the Retry-After parser and
// the secrets a failure's text must not show (Secrets, Redact). An
// adapter imports engine for the types it converts to (Request,
// StreamEvent, ProviderError) and this package for help; the engine
// itself needs none of it, so net/http and mime stay out of its core.
package provider
