// Package durable runs an xcsh session as a Temporal workflow (issue 31):
// the session outlives any process, each model call and each tool call is
// a recorded step, and a front on any machine drives it with the RPC
// protocol.
//
// # Decisions and work
//
// The workflow (Session) holds the conversation and takes the loop's
// decisions with the engine's own functions (engine.AfterReply,
// engine.PlaceholderResult, engine.Retryable, engine.RetryDelay,
// engine.CompactionDue, engine.PromptCompactionDue,
// engine.OverflowRecoverable): there is no second copy of the loop's
// rules.
// The work is in activities (Activities): the set-up (what the worker's
// configuration offers: model, system prompt, tools), the check of a host
// tool call's arguments, a compaction's summary, a model call (one
// activity; its final message is the result, built with engine.Reply; its
// deltas are published to the attached fronts while it runs, best effort),
// and a tool call (one activity per call, its activity id the call id,
// heartbeating while it runs).
//
// # What is repeated
//
// A model call that was cut by a lost worker runs again (it has no effect
// but its cost). A tool call whose result is recorded is never run again:
// replay reads the result from the history. A tool call that may have
// started and has no recorded result (its worker died) is run again only
// if its tool declares itself idempotent (engine.IdempotentTool: read,
// grep, find); any other is reported to the model and the host as
// interrupted, with InterruptedMessage, and never repeated.
//
// # The front's view
//
// Every event the workflow emits is numbered (seq, from 1, never reused,
// continuing across continue-as-new) and kept in a bounded log the front
// reads with the "events" query from its cursor; message_update deltas
// are not in the log (they would swell it): the model-call activity pushes
// them to the fronts that attached an endpoint, and the message_end in the
// log is the truth. Commands are updates (prompt, steer, follow_up, abort,
// set_interrupt_mode, set_host_tools, attach, compact,
// set_auto_compaction), refused with the RPC
// protocol's texts; get_state, get_messages and get_session_stats are
// queries, answered with the engine's bytes. Fronts and workers use
// DataConverter, whose JSON does not escape <, > and &.
//
// # The agent server
//
// A front's core (front) serves the stdio front (RunFront) and the agent
// server's durable sessions alike (Served, serve.go: rpc/serve's
// RemoteSession, wired by cmd/xcsh): the server's log takes the events
// with the workflow's seq, and a replay from a cursor older than the
// server's log reads the workflow's. A server takes every session's
// deltas on one endpoint (Deltas).
//
// # Host tools and compaction
//
// A host tool's call is a host_tool_call event, and the workflow waits
// on its own state for the host's reply, which any front forwards as an
// update (host_tool_result, host_tool_update): no activity runs while the
// host works. The workflow compacts where the in-process session does,
// with the engine's decisions (after a run: engine.CompactionDue; before
// a prompt: engine.PromptCompactionDue; after an overflow:
// engine.OverflowRecoverable, then the request again; by hand: the
// compact update), the summary an activity (engine.CompactContext), and
// continues as new once idle with the summary and the kept messages, the
// event numbering, the modes and the state of compaction.
//
// # Dialogs
//
// A tool call's questions to the user (the confirm gate's, the ask
// tool's) are the workflow's to ask: the call's step stops at a new
// question before anything takes effect, the workflow emits the
// extension_ui_request and waits on its own state for the host's answer
// (an update), the timeout or an abort, then runs the step again with the
// answers so far (dialogs.go). A tool that may ask after it has taken
// effect is answered with ErrNoDialogs.
//
// # The user's setup, TTSR and todos
//
// The worker reads its resources at start and offers the system prompt an
// in-process session would have. The model-call activity watches the
// stream with the engine's stall watchdog and the worker's TTSR rules
// (callwatch.go); the workflow takes the engine's post-run decisions after
// retry: TTSR (engine.TTSRResume, ttsr.go), then, unless compaction is
// due, the todo reminder (engine.TodoReminderDue, todo.go). The todo list,
// the reminders' count and the rules injected are workflow state, carried
// across continue-as-new.
//
// # Export
//
// Each run keeps its part of the session's record (export.go: the
// messages it added and its compactions, with where each message of its
// context came from), which the "xcsh.record" query answers, closed runs
// too. ExportSession walks the runs back through PrevRunID and assembles
// the entries of a session file (Exported.WriteSessionFile), which
// resumes in process; the front's export_html writes the page from it.
// The record is workflow state only: it adds nothing to the history.
//
// # Determinism
//
// Workflow code reads time only from workflow.Now, waits only with
// workflow.Await and workflow.Sleep, and iterates no map. The replay tests
// (testdata/*.json, worker.NewWorkflowReplayer) hold it to that.
package durable
