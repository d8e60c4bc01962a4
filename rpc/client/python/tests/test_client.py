"""RpcClient (threads) against the real binary on the fake provider."""

import os
import threading
import time
import unittest

from xcsh_rpc import SCHEMA_HASH, ClientClosed, HostTool, RpcClient, RpcError

from . import agent


class RpcClientTest(unittest.TestCase):
    def start(self, *args, files=None, **extra):
        d = agent.workdir(files)
        self.addCleanup(agent.cleanup, d)
        if extra.pop("scripted", False):
            extra["model"] = agent.script(d)
        c = RpcClient(**agent.options(d, *args, **extra))
        c.start()
        self.addCleanup(c.stop)
        return c, d

    def test_prompt_with_builtin_tool_call(self):
        c, _ = self.start("--tools", "read", scripted=True)
        ready = c.get_ready()
        self.assertEqual(ready["type"], "ready")
        self.assertIsInstance(ready["version"], str)
        # Once the agent and the generated protocol.py both name a schema, they must agree.
        if SCHEMA_HASH and c.schema_hash():
            self.assertTrue(c.schema_matches())
        else:
            self.assertIsNone(c.schema_matches())

        events = c.prompt_and_wait("What does the note say?")
        self.assertEqual(events[0]["type"], "agent_start")
        self.assertEqual(events[-1]["type"], "agent_end")
        (start,) = agent.of_type(events, "tool_execution_start")
        self.assertEqual((start["toolCallId"], start["toolName"], start["args"]), ("r1", "read", {"path": "note.txt"}))
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertFalse(end["isError"])
        self.assertIn("remember the milk", agent.text_of(end["result"]))
        self.assertEqual([m["role"] for m in events[-1]["messages"]], ["user", "assistant", "toolResult", "assistant"])

        # The second model call saw the tool's result: the echo repeats its context.
        self.assertRegex(c.get_last_assistant_text(), r"\[toolResult read\]\s+remember the milk")
        self.assertEqual(len(c.get_messages()), 4)
        state = c.get_state()
        self.assertEqual(state["model"]["id"], "script")
        self.assertFalse(state["isStreaming"])
        self.assertEqual(state["messageCount"], 4)

    def test_host_tool_called_and_answered(self):
        c, _ = self.start()
        calls = []

        def lookup(args, ctx):
            calls.append((args, ctx.tool_call_id, threading.current_thread() is not threading.main_thread()))
            ctx.update("looking up " + args["name"])
            return {"content": [{"type": "text", "text": args["name"] + " is 36"}], "details": {"age": 36}}

        names = c.register_host_tools([HostTool("lookup_user", "Look a user up", agent.LOOKUP_PARAMS, lookup)])
        self.assertEqual(names, ["lookup_user"])
        events = c.prompt_and_wait('demo:tool lookup_user {"name":"ada"}')
        self.assertEqual(calls, [({"name": "ada"}, "call_demo_1", True)])
        (update,) = agent.of_type(events, "tool_execution_update")
        self.assertEqual(agent.text_of(update["partialResult"]), "looking up ada")
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertFalse(end["isError"])
        self.assertEqual(end["result"], {"content": [{"type": "text", "text": "ada is 36"}], "details": {"age": 36}})
        self.assertEqual(c.get_last_assistant_text(), "Tool lookup_user returned: ada is 36")

    def test_host_tool_error_and_refused_set(self):
        c, _ = self.start()

        def flaky(args, ctx):
            raise RuntimeError("the directory is down")

        c.register_host_tools([{"name": "flaky", "description": "Fails", "parameters": {"type": "object"},
                                "handler": flaky}])
        with self.assertRaises(RpcError) as caught:
            c.register_host_tools([HostTool("read", "Clashes", {"type": "object"}, lambda a, ctx: "no")])
        self.assertIn("conflicts with an existing tool", str(caught.exception))
        self.assertEqual(caught.exception.command, "set_host_tools")
        # The refused set kept the previous handler.
        events = c.prompt_and_wait("demo:tool flaky {}")
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertTrue(end["isError"])
        self.assertEqual(agent.text_of(end["result"]), "the directory is down")

    def test_extension_dialog_answered_by_handler(self):
        # The example permission gate asks (ui.confirm) before rm -rf.
        c, d = self.start("--tools", "bash", "--extension", str(agent.PERMISSION_GATE))
        os.mkdir(os.path.join(d, "victim"))
        answers = [False, True]
        asked = []

        class UI:
            def dialog(self, request, cancelled):
                asked.append((request["method"], request["title"], request["message"]))
                return answers.pop(0)

        c.on_ui(UI())
        events = c.prompt_and_wait('demo:tool bash {"command":"rm -rf victim"}')
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertTrue(end["isError"])
        self.assertEqual(agent.text_of(end["result"]), "Blocked by the permission gate: rm -rf victim")
        self.assertTrue(os.path.isdir(os.path.join(d, "victim")))

        events = c.prompt_and_wait('demo:tool bash {"command":"rm -rf victim"}')
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertFalse(end["isError"])
        self.assertFalse(os.path.exists(os.path.join(d, "victim")))
        self.assertEqual(asked, [("confirm", "Allow a destructive command?", "rm -rf victim")] * 2)

    def test_dialog_without_handler_is_cancelled(self):
        c, d = self.start("--tools", "bash", "--extension", str(agent.PERMISSION_GATE))
        os.mkdir(os.path.join(d, "victim"))
        events = c.prompt_and_wait('demo:tool bash {"command":"rm -rf victim"}')
        (end,) = agent.of_type(events, "tool_execution_end")
        self.assertTrue(end["isError"])
        self.assertTrue(os.path.isdir(os.path.join(d, "victim")))

    def test_unknown_command_fails_at_once(self):
        c, _ = self.start(request_timeout=60.0)
        t0 = time.monotonic()
        with self.assertRaises(RpcError) as caught:
            c.call("frobnicate")
        self.assertEqual(str(caught.exception), "Unknown command: frobnicate")
        self.assertLess(time.monotonic() - t0, 10)
        with self.assertRaises(RpcError):
            c.set_steering_mode("sideways")

    def test_abort_and_busy_prompt(self):
        c, _ = self.start()
        streaming = threading.Event()
        failures = []
        c.on_event(lambda e: e.get("type") == "message_update" and streaming.set())
        c.on_event(lambda e: e.get("type") == "response" and not e.get("success") and failures.append(e))
        result = {}

        def run():
            result["events"] = c.prompt_and_wait("demo:block", timeout=20)

        t = threading.Thread(target=run)
        t.start()
        self.assertTrue(streaming.wait(20))
        # Acknowledged, then refused as busy: prompt_and_wait raises the failure.
        with self.assertRaisesRegex(RpcError, "Agent is already processing"):
            c.prompt_and_wait("another", timeout=20)
        self.assertEqual(len(failures), 1)
        c.abort()
        t.join(20)
        self.assertEqual(result["events"][-1]["messages"][-1]["stopReason"], "aborted")
        self.assertFalse(c.get_state()["isStreaming"])

    def test_typed_commands(self):
        c, _ = self.start()
        out = c.bash("echo hi")
        self.assertEqual((out["exitCode"], out["output"]), (0, "hi\n"))
        self.assertEqual(c.set_budget(max_tokens=1000)["maxTokens"], 1000)
        c.set_steering_mode("all")
        state = c.get_state()
        self.assertEqual(state["steeringMode"], "all")
        self.assertEqual(state["budget"]["maxTokens"], 1000)

    def test_prompt_for_output(self):
        # A scripted model whose first answer is not JSON: one retry, then the match.
        answers = '{"turns":[{"steps":[{"text":"Thinking..."}]},{"steps":[{"text":"{\\"answer\\": 42}"}]}]}'
        c, _ = self.start(files={"answer.json": answers}, model="answer.json")
        schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
        end = c.prompt_for_output("What is the answer?", schema)
        self.assertEqual(end, {"type": "output_schema_end", "success": True, "retries": 1, "output": {"answer": 42}})

    def test_steer_and_follow_up_queue_while_idle(self):
        c, _ = self.start()
        queues = []
        c.on_event(lambda e: e.get("type") == "queue_update" and queues.append(e))
        c.steer("first")
        c.follow_up("later")
        self.assertEqual(c.get_state()["queuedMessageCount"], 2)
        self.assertEqual(queues[-1], {"type": "queue_update", "steering": ["first"], "followUp": ["later"]})

    def test_start_failure_carries_stderr(self):
        c = RpcClient(provider="no-such-provider", args=["--no-session"])
        with self.assertRaisesRegex(ClientClosed, 'unknown provider "no-such-provider"'):
            c.start()


if __name__ == "__main__":
    unittest.main()
