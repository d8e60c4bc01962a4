// The README's example, type-checked by the tests' build (tsconfig.test.json) so it stays true;
// run it with `node build/examples/readme.js` after `npm run build:test`, xcsh on PATH.
import { RpcClient } from "../src/index.js"; // was: import { RpcClient } from ".../rpc-client.js"

const client = new RpcClient({ cliPath: "xcsh", provider: "fake", args: ["--no-session"] });
await client.start(); // resolves at the agent's ready frame

// A tool the host runs itself: the model calls it like a built-in.
await client.registerHostTools([
  {
    name: "clock",
    description: "The host's current time",
    parameters: { type: "object" },
    handler: async (_args, ctx) => {
      ctx.update("looking at the clock");
      return new Date().toISOString();
    },
  },
]);

// Dialogs an extension opens (select, confirm, input, editor).
client.onUI({
  dialog: async (request) => (request.method === "confirm" ? true : undefined),
  notify: (request) => console.error("[ui]", request.method),
});

client.onEvent((event) => {
  if (event.type === "message_update") {
    const e = event.assistantMessageEvent as { type: string; delta?: string };
    if (e.type === "text_delta") process.stdout.write(e.delta ?? "");
  }
});
const events = await client.promptAndWait("demo:tool clock {}");
console.log("\n", events.length, "events;", await client.getLastAssistantText());
await client.stop();
