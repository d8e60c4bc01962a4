# xcsh-go developer targets. `make test` is the README's test command.
GO ?= go
BIN ?= bin/xcsh

.PHONY: build test test-short race check golden schema bench fuzz demo

# xcsh and, beside it, xcsh-bedrock: the helper that serves Amazon Bedrock
# models (docs/providers.md), which xcsh finds next to its own binary.
build:
	$(GO) build -o $(BIN) ./cmd/xcsh
	$(GO) build -o $(dir $(BIN))xcsh-bedrock ./cmd/xcsh-bedrock

test:
	$(GO) test ./...

# The fast subset for a small machine: every package and scenario, the
# slowest tests in their smaller -short variants, no race detector.
test-short:
	$(GO) test -short ./...

race:
	$(GO) test -race ./...

check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Refresh goldens and in-script cmp targets; review the diff like code.
golden:
	GOLDIE_UPDATE=1 UPDATE_SCRIPTS=1 $(GO) test ./rpc/ ./cmd/xcsh/ -run 'TestServerGolden|TestScripts' -count=1

# After a change of the protocol's Go types or their doc comments: the schema's generated files
# (doc comments, hashes), then the typed clients' protocol types (where the clients are), then
# `make golden` for the schema_* goldens.
schema:
	$(GO) generate ./rpc/schema/
	@if [ -d rpc/client/ts/src ]; then $(GO) run ./cmd/xcsh schema --format typescript > rpc/client/ts/src/protocol.ts; fi
	@if [ -d rpc/client/python/xcsh_rpc ]; then $(GO) run ./cmd/xcsh schema --format python > rpc/client/python/xcsh_rpc/protocol.py; fi

bench:
	# Stream includes Stream5000DeltasSlowReader: a host reading 32 KiB a millisecond, the deltas
	# merged while stdout is full (issue 15: bytes written and time, against 300 MB unmerged).
	$(GO) test -run '^$$' -bench 'ColdStart|IdleMemory|Stream|Load|Append|SwitchSession|ToRequest|CompactionPrepare|TTSR|ACP' -benchmem -benchtime 20x ./cmd/xcsh/ ./engine/... ./rpc/
	# Extensions: a hook's round trip, the tap on an unsubscribed delta, a 5,000-delta session with an
	# extension subscribed to agent_end only (within 5% of none: the binary's Stream...ExtAgentEnd above).
	$(GO) test -run '^$$' -bench 'HookRoundTrip|TapDelta|Session5000' -benchmem -benchtime 200x ./engine/extension/
	# Round trips are microseconds: 20 of them would measure scheduler noise.
	$(GO) test -run '^$$' -bench 'GetState' -benchmem -benchtime 3000x ./cmd/xcsh/ ./rpc/
	# Command starts through the supervisor, sandboxed or not (issue 15, issue 21: < 5 ms added), and
	# the file tools' sandbox check (< 50 us).
	$(GO) test -run '^$$' -bench 'BashRoundTrip|BashFirstCommand|Start' -benchtime 50x ./cmd/xcsh/ ./engine/tools/shellexec/
	$(GO) test -run '^$$' -bench 'OpenDir' -benchtime 20000x ./engine/tools/sandbox/
	$(GO) test -run '^$$' -bench 'MCPToolRoundTrip' -benchmem -benchtime 3000x ./engine/mcp/
	# The agent server (issue 28; its IdleMemory1000Sessions and Stream5000Deltas run above): an
	# attach replaying 10,000 events (<= 50 ms).
	$(GO) test -run '^$$' -bench 'ServeAttachReplay' -benchtime 20x ./cmd/xcsh/
	# xcsh schema from exec to exit, each format (issue 29: under 50 ms), and the rpc schema
	# generated in process.
	$(GO) test -run '^$$' -bench 'Schema(Command|Generate)|VersionCommand' -benchmem -benchtime 20x ./cmd/xcsh/
	# Tracing (issue 30): a whole run with tracing off and on (off: a nil check per run, call and tool;
	# compare PromptToRequest and ToolResultToRequest above with a build before it), and one span's
	# in-process cost when on (< 50 us).
	$(GO) test -run '^$$' -bench 'OtelOffCostsNothing|Span' -benchmem -benchtime 2000x ./engine/otel/
	# Amazon Bedrock's helper process (issue 27): what the first Bedrock call of a session pays to
	# start xcsh-bedrock, against a call on the running helper.
	$(GO) test -run '^$$' -bench 'BedrockHelper' -benchtime 20x ./cmd/xcsh/
	# Durable sessions (issue 31): a step (model or tool call) on the local dev server of
	# ../shared/temporal against the same in process, and a 5,000-delta reply's time to the
	# attached front (and how many deltas it wrote) against the same in process (docs/durable.md;
	# skipped without the server).
	$(GO) test -run '^$$' -bench 'StepDevServer|StepInProcess|Deltas5000' -benchtime 20x ./engine/durable/

fuzz:
	$(GO) test ./rpc/ -run '^$$' -fuzz FuzzDispatch -fuzztime 20s
	$(GO) test ./rpc/ -run '^$$' -fuzz FuzzReadExact -fuzztime 10s
	$(GO) test ./rpc/ -run '^$$' -fuzz FuzzScanner -fuzztime 10s
	# Host tools with random schemas through set_host_tools: nothing a schema names is opened.
	$(GO) test ./rpc/ -run '^$$' -fuzz FuzzHostToolSchema -fuzztime 20s

# The README's main job: the binary in RPC mode on the fake demo model.
demo:
	printf '%s\n' '{"id":"p1","type":"prompt","message":"Hello, agent"}' | $(GO) run ./cmd/xcsh --mode rpc --provider fake --no-session
