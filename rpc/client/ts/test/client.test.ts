// The client against the real binary ($XCSH_BIN, else xcsh on PATH) on the fake provider: a
// scripted model (--model script.json) and the built-in demo. Each test starts its own agent
// in a fresh directory with its own HOME. Nothing sleeps: every wait is on a frame.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
	type AgentEvent,
	type ExtensionUiRequest,
	RpcClient,
	type RpcClientOptions,
	RpcError,
	SCHEMA_HASH,
} from "../src/index.js";

const fixtures = fileURLToPath(new URL("../../test/fixtures/", import.meta.url));
const dirs: string[] = [];
const clients: RpcClient[] = [];

after(async () => {
	await Promise.all(clients.map((c) => c.stop()));
	for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** start runs the agent in a fresh directory holding files, with the fake provider. */
async function start(files: Record<string, string>, options: RpcClientOptions = {}): Promise<RpcClient> {
	const dir = mkdtempSync(join(tmpdir(), "xcsh-ts-client-"));
	dirs.push(dir);
	for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
	const client = new RpcClient({
		provider: "fake",
		cwd: dir,
		env: { HOME: join(dir, ".home"), PI_CODING_AGENT_DIR: join(dir, ".agent"), XCSH_DETERMINISTIC: "1" },
		stopGrace: 2000,
		requestTimeout: 20000,
		...options,
		args: ["--no-session", ...(options.args ?? [])],
	});
	clients.push(client);
	await client.start();
	return client;
}

// Frames are read by key: the tests must compile against protocol.ts whatever the shape of its
// generated unions.
type Frame = Record<string, any>;
const byType = (events: AgentEvent[], type: string) => (events as unknown as Frame[]).filter((e) => e.type === type);

function textOf(result: unknown): string {
	const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
	return content
		.filter((c) => c.type === "text")
		.map((c) => c.text)
		.join("\n");
}

describe("RpcClient", () => {
	test("a prompt with a built-in tool call runs to agent_end", async () => {
		const script = {
			turns: [
				{
					expect: { lastUserText: "What does the note say?" },
					steps: [{ text: "Reading it." }, { toolCall: { id: "r1", name: "read", arguments: { path: "note.txt" } } }],
				},
				{ steps: [{ echo: "context" }] },
			],
		};
		const client = await start(
			{ "script.json": JSON.stringify(script), "note.txt": "remember the milk\n" },
			{ model: "script.json", args: ["--tools", "read"] },
		);
		const ready = client.getReady() as Frame | null;
		assert.equal(ready?.type, "ready");
		assert.equal(typeof ready?.version, "string");
		// Once the agent and the generated protocol.ts both name a schema, they must agree.
		if ((SCHEMA_HASH as string) !== "" && client.getSchemaHash() !== undefined) assert.equal(client.schemaMatches(), true);
		else assert.equal(client.schemaMatches(), undefined);

		const events = await client.promptAndWait("What does the note say?");
		const types = events.map((e) => e.type);
		assert.equal(types[0], "agent_start");
		assert.equal(types.at(-1), "agent_end");
		const [begin] = byType(events, "tool_execution_start");
		assert.deepEqual([begin.toolCallId, begin.toolName, begin.args], ["r1", "read", { path: "note.txt" }]);
		const [end] = byType(events, "tool_execution_end");
		assert.equal(end.isError, false);
		assert.match(textOf(end.result), /remember the milk/);
		assert.equal(byType(events, "turn_end").length, 2);
		const agentEnd = byType(events, "agent_end")[0];
		assert.deepEqual(
			agentEnd.messages.map((m: { role: string }) => m.role),
			["user", "assistant", "toolResult", "assistant"],
		);

		// The second model call saw the tool's result: the echo repeats its context.
		const last = await client.getLastAssistantText();
		assert.match(last ?? "", /\[toolResult read\]\s+remember the milk/);
		const messages = await client.getMessages();
		assert.equal(messages.length, 4);
		const state = await client.getState();
		assert.equal(state.model?.id, "script");
		assert.equal(state.isStreaming, false);
		assert.equal(state.messageCount, 4);
	});

	test("a host tool is called by the model and answered by the client", async () => {
		const client = await start({});
		const calls: Array<{ args: unknown; toolCallId: string }> = [];
		const names = await client.registerHostTools([
			{
				name: "lookup_user",
				description: "Look a user up in the host's directory",
				parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
				handler: async (args: { name: string }, ctx) => {
					calls.push({ args, toolCallId: ctx.toolCallId });
					ctx.update(`looking up ${args.name}`);
					return { content: [{ type: "text", text: `${args.name} is 36` }], details: { age: 36 } };
				},
			},
		]);
		assert.deepEqual(names, ["lookup_user"]);
		const state = await client.getState();
		assert.ok(
			(state.dumpTools as Array<{ name: string }>).some((t) => t.name === "lookup_user"),
			"get_state lists the host tool",
		);

		const events = await client.promptAndWait('demo:tool lookup_user {"name":"ada"}');
		assert.deepEqual(calls, [{ args: { name: "ada" }, toolCallId: "call_demo_1" }]);
		const [call] = byType(events, "host_tool_call");
		assert.equal(call.toolName, "lookup_user");
		const [update] = byType(events, "tool_execution_update");
		assert.equal(textOf(update.partialResult), "looking up ada");
		const [end] = byType(events, "tool_execution_end");
		assert.equal(end.isError, false);
		assert.deepEqual(end.result, { content: [{ type: "text", text: "ada is 36" }], details: { age: 36 } });
		assert.equal(await client.getLastAssistantText(), "Tool lookup_user returned: ada is 36");
	});

	test("a host tool handler that throws gives the model an error result", async () => {
		const client = await start({});
		await client.registerHostTools([
			{
				name: "flaky",
				description: "Always fails",
				parameters: { type: "object" },
				handler: () => {
					throw new Error("the directory is down");
				},
			},
		]);
		const events = await client.promptAndWait("demo:tool flaky {}");
		const [end] = byType(events, "tool_execution_end");
		assert.equal(end.isError, true);
		assert.equal(textOf(end.result), "the directory is down");
		assert.equal(await client.getLastAssistantText(), "Tool flaky failed: the directory is down");
	});

	test("a host tool call withdrawn by abort aborts the handler's signal and sends nothing", async () => {
		const client = await start({});
		let entered!: () => void;
		const inHandler = new Promise<void>((resolve) => (entered = resolve));
		let aborted!: () => void;
		const handlerAborted = new Promise<void>((resolve) => (aborted = resolve));
		await client.registerHostTools([
			{
				name: "slow",
				description: "Never ends on its own",
				parameters: { type: "object" },
				handler: (_args, ctx) =>
					new Promise((_resolve, reject) => {
						ctx.signal.addEventListener("abort", () => {
							aborted();
							reject(ctx.signal.reason);
						});
						entered();
					}),
			},
		]);
		const idle = client.collectEvents(20000);
		await client.prompt("demo:tool slow {}");
		await inHandler;
		await client.abort();
		await handlerAborted;
		const events = await idle;
		assert.equal(byType(events, "host_tool_cancel").length, 1);
		const [end] = byType(events, "tool_execution_end");
		assert.equal(end.isError, true);
		assert.equal(textOf(end.result), 'Host tool "slow" was aborted');
	});

	test("a refused host tool set keeps the previous handlers", async () => {
		const client = await start({});
		await client.registerHostTools([
			{ name: "kept", description: "Kept", parameters: { type: "object" }, handler: () => "kept answered" },
		]);
		await assert.rejects(
			client.registerHostTools([
				{ name: "read", description: "Clashes with a built-in", parameters: { type: "object" }, handler: () => "no" },
			]),
			(err: unknown) => err instanceof RpcError && /conflicts with an existing tool/.test(err.message),
		);
		await client.promptAndWait("demo:tool kept {}");
		assert.equal(await client.getLastAssistantText(), "Tool kept returned: kept answered");
	});

	test("an extension's dialog is answered by the UI handler", async () => {
		const client = await start({}, { args: ["--tools", "bash", "--extension", join(fixtures, "ask-ext")] });
		const seen: string[] = [];
		client.onUI({
			notify: (req) => seen.push(`notify ${(req as unknown as Frame).message}`),
			dialog: (req: ExtensionUiRequest) => {
				const { method, title, options } = req as unknown as Frame;
				assert.equal(method, "select");
				seen.push(`select ${title} [${options.join(",")}]`);
				return seen.length > 2 ? "run" : "skip";
			},
		});

		// The first answer is "skip": the extension blocks the call.
		let events = await client.promptAndWait('demo:tool bash {"command":"echo from-bash"}');
		let [end] = byType(events, "tool_execution_end");
		assert.equal(end.isError, true);
		assert.equal(textOf(end.result), 'Blocked: the host answered "skip"');
		const [request] = byType(events, "extension_ui_request").filter((e) => e.method === "select");
		assert.equal(request.title, "Run this command?");

		// The second is "run": the command runs.
		events = await client.promptAndWait('demo:tool bash {"command":"echo from-bash"}');
		[end] = byType(events, "tool_execution_end");
		assert.equal(end.isError, false);
		assert.equal(textOf(end.result).trim(), "from-bash");
		assert.deepEqual(seen, [
			"notify about to ask about: echo from-bash",
			"select Run this command? [run,skip]",
			"notify about to ask about: echo from-bash",
			"select Run this command? [run,skip]",
		]);
	});

	test("a dialog the host does not answer in time is cancelled, and the handler's signal aborts", async () => {
		const client = await start({}, { args: ["--tools", "bash", "--extension", join(fixtures, "ask-ext")] });
		let aborted: Promise<void> | undefined;
		client.onUI({
			dialog: (_req, signal) => {
				aborted = new Promise((resolve) => signal.addEventListener("abort", () => resolve()));
				return new Promise(() => {}); // never answers
			},
		});
		const events = await client.promptAndWait('demo:tool bash {"command":"echo slow"}');
		await aborted;
		const [end] = byType(events, "tool_execution_end");
		assert.equal(textOf(end.result), "Blocked: the host answered cancelled (timed out)");
	});

	test("without a UI handler a dialog is answered cancelled at once", async () => {
		const client = await start({}, { args: ["--tools", "bash", "--extension", join(fixtures, "ask-ext")] });
		const events = await client.promptAndWait('demo:tool bash {"command":"echo x"}');
		const [end] = byType(events, "tool_execution_end");
		assert.equal(textOf(end.result), "Blocked: the host answered cancelled");
	});

	test("an unknown command fails at once, not after a timeout", async () => {
		const client = await start({}, { requestTimeout: 60000 });
		const t0 = Date.now();
		await assert.rejects(client.call("frobnicate", {}), (err: unknown) => {
			assert.ok(err instanceof RpcError);
			assert.equal(err.message, "Unknown command: frobnicate");
			return true;
		});
		assert.ok(Date.now() - t0 < 10000);
		await assert.rejects(client.setSteeringMode("sideways" as "all"), RpcError);
	});

	test("abort ends a blocked run; a prompt while busy fails to start", async () => {
		const client = await start({});
		const started = new Promise<void>((resolve) => {
			const off = client.onEvent((e) => {
				if (e.type === "message_update") {
					off();
					resolve();
				}
			});
		});
		const lateFailures: Frame[] = [];
		client.onEvent((event) => {
			const e = event as unknown as Frame;
			if (e.type === "response" && e.success === false) lateFailures.push(e);
		});
		const idle = client.collectEvents(20000);
		await client.prompt("demo:block");
		await started;

		// Acknowledged, then refused: the failure arrives as a response event.
		const busy = client.collectEvents(20000);
		await client.prompt("another");
		await assert.rejects(busy, /Agent is already processing/);
		assert.equal(lateFailures.length, 1);

		await client.abort();
		const events = await idle;
		const agentEnd = byType(events, "agent_end")[0];
		assert.equal(agentEnd.messages.at(-1)?.stopReason, "aborted");
		assert.equal((await client.getState()).isStreaming, false);
	});

	test("bash, set_budget and steering modes are typed commands", async () => {
		const client = await start({});
		const result = await client.bash("echo hi");
		assert.equal(result.exitCode, 0);
		assert.equal(result.output, "hi\n");
		const budget = await client.setBudget({ maxTokens: 1000 });
		assert.equal(budget.maxTokens, 1000);
		await client.setSteeringMode("all");
		const state = await client.getState();
		assert.equal(state.steeringMode, "all");
		assert.equal(state.budget?.maxTokens, 1000);
	});

	test("the README's example is examples/readme.ts, which the build type-checks", () => {
		const root = fileURLToPath(new URL("../../", import.meta.url));
		const readme = readFileSync(join(root, "README.md"), "utf8");
		const block = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
		assert.ok(block, "README.md has a ts block under ## Example");
		const example = readFileSync(join(root, "examples", "readme.ts"), "utf8");
		assert.ok(
			example.endsWith(block.replace('from "@xcsh-go/rpc-client"', 'from "../src/index.js"')),
			"examples/readme.ts ends with the README's example (its import from ../src)",
		);
	});

	test("promptForOutput resolves with the structured answer", async () => {
		const script = { turns: [{ steps: [{ text: "Thinking..." }] }, { steps: [{ text: '{"answer": 42}' }] }] };
		const client = await start({ "script.json": JSON.stringify(script) }, { model: "script.json" });
		const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] };
		const retried: Frame[] = [];
		client.onEvent((e) => {
			if (e.type === "output_schema_retry") retried.push(e as unknown as Frame);
		});
		// The first answer is not JSON: one retry, then the match.
		const end = await client.promptForOutput("What is the answer?", schema);
		assert.deepEqual(end, { type: "output_schema_end", success: true, retries: 1, output: { answer: 42 } });
		assert.equal(retried.length, 1);
	});

	test("steer and followUp queue while idle", async () => {
		const client = await start({});
		const queues: Frame[] = [];
		client.onEvent((e) => {
			if (e.type === "queue_update") queues.push(e as unknown as Frame);
		});
		await client.steer("first");
		await client.followUp("later");
		assert.equal((await client.getState()).queuedMessageCount, 2);
		assert.deepEqual(queues.at(-1), { type: "queue_update", steering: ["first"], followUp: ["later"] });
	});

	test("start fails with the agent's stderr when it cannot start", async () => {
		const client = new RpcClient({ provider: "no-such-provider", args: ["--no-session"] });
		await assert.rejects(client.start(), /unknown provider "no-such-provider"/);
	});
});
