"""AsyncRpcClient against the real binary on the fake provider."""

import asyncio
import os
import unittest

from xcsh_rpc import AsyncRpcClient, HostTool, RpcError

from . import agent


class AsyncRpcClientTest(unittest.IsolatedAsyncioTestCase):
    async def start(self, *args, scripted=False, **extra):
        d = agent.workdir()
        self.addCleanup(agent.cleanup, d)
        if scripted:
            extra["model"] = agent.script(d)
        c = AsyncRpcClient(**agent.options(d, *args, **extra))
        await c.start()
        self.addAsyncCleanup(c.stop)
        return c, d

    async def test_prompt_with_builtin_tool_call(self):
        c, _ = await self.start("--tools", "read", scripted=True)
        self.assertEqual(c.get_ready()["type"], "ready")
        events = await c.prompt_and_wait("What does the note say?")
        (start,) = agent.of_type(events, "tool_execution_start")
        self.assertEqual((start["toolName"], start["args"]), ("read", {"path": "note.txt"}))
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertFalse(end["isError"])
        self.assertIn("remember the milk", agent.text_of(end["result"]))
        self.assertEqual(events[-1]["type"], "agent_end")
        self.assertRegex(await c.get_last_assistant_text(), r"\[toolResult read\]\s+remember the milk")
        self.assertEqual((await c.get_state())["messageCount"], 4)

    async def test_host_tool_coroutine_handler(self):
        c, _ = await self.start()

        async def lookup(args, ctx):
            ctx.update({"content": [{"type": "text", "text": "looking up " + args["name"]}]})
            await asyncio.sleep(0)  # a real coroutine: it yields to the reader
            return args["name"] + " is 36"

        self.assertEqual(await c.register_host_tools([HostTool("lookup_user", "Look a user up",
                                                               agent.LOOKUP_PARAMS, lookup)]), ["lookup_user"])
        events = await c.prompt_and_wait('demo:tool lookup_user {"name":"ada"}')
        (update,) = agent.of_type(events, "tool_execution_update")
        self.assertEqual(agent.text_of(update["partialResult"]), "looking up ada")
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertEqual(end["result"], {"content": [{"type": "text", "text": "ada is 36"}], "details": {}})
        self.assertEqual(await c.get_last_assistant_text(), "Tool lookup_user returned: ada is 36")

    async def test_host_tool_cancelled_on_abort(self):
        c, _ = await self.start()
        entered = asyncio.Event()
        cancelled = asyncio.Event()

        async def wait_forever(args, ctx):
            entered.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise

        await c.register_host_tools([HostTool("slow", "Never ends", {"type": "object"}, wait_forever)])
        idle = asyncio.create_task(c.collect_events(20))
        await c.prompt("demo:tool slow {}")
        await asyncio.wait_for(entered.wait(), 20)
        await c.abort()
        await asyncio.wait_for(cancelled.wait(), 20)
        events = await idle
        self.assertEqual(len(agent.of_type(events, "host_tool_cancel")), 1)
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertTrue(end["isError"])
        self.assertEqual(agent.text_of(end["result"]), 'Host tool "slow" was aborted')

    async def test_extension_dialog_answered_by_coroutine(self):
        c, d = await self.start("--tools", "bash", "--extension", str(agent.PERMISSION_GATE))
        os.mkdir(os.path.join(d, "victim"))
        asked = []

        async def dialog(request, cancelled):
            asked.append((request["method"], request["message"]))
            return True

        c.on_ui(dialog)
        events = await c.prompt_and_wait('demo:tool bash {"command":"rm -fr victim"}')
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertFalse(end["isError"])
        self.assertFalse(os.path.exists(os.path.join(d, "victim")))
        self.assertEqual(asked, [("confirm", "rm -fr victim")])

    async def test_unknown_command_and_refusal(self):
        c, _ = await self.start(request_timeout=60.0)
        with self.assertRaisesRegex(RpcError, "^Unknown command: frobnicate$"):
            await asyncio.wait_for(c.call("frobnicate"), 10)
        with self.assertRaises(RpcError):
            await c.set_follow_up_mode("sideways")
        out = await c.bash("echo hi")
        self.assertEqual(out["output"], "hi\n")


if __name__ == "__main__":
    unittest.main()
