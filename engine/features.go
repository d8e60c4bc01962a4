package engine

// features are the parts of the session that plug into its lists, in the
// order they plug in. New calls each once; each lives in its feature's
// own file and appends what it brings to:
//
//   - stages, the post-run decision (postStage);
//   - watches, the stream watches of a model call (streamWatch);
//   - inputs, the steps a prompt's text takes (inputStage);
//   - onInstall, what a feature forgets or re-reads when a record is
//     installed (install: a new session, a switch, a branch, a fork, a
//     clone, a resume).
//
// This list is the one place that fixes their order, and the order of the
// post-run stages matters (agent-core §6.2, §7, §11.2): every stage before
// the one that asks for work runs, and the first that asks gets it.
//
//  1. Retry first: a transient failure is retried before anything else
//     looks at the run, and a retry in progress is closed
//     (auto_retry_end) whatever happens next.
//  2. TTSR next: a call a rule cut runs again with the rule injected, and
//     rules that matched without interrupting are injected before the run
//     goes on; compaction and reminders look at the run that follows.
//  3. Automatic compaction: on an overflow (which retry never takes) or
//     over the threshold; it also prunes old tool output when it passes.
//  4. Todo reminders: only a run that really stopped, in a context
//     already compacted, gets one.
//  5. Structured output last: the answer a run stops with is checked
//     against the prompt's output schema once nothing else goes on.
//
// Budgets have no stage: a run that reaches one is cancelled with the
// budget as the cause, so every stage sees it aborted.
//
// The truncation check and the command expansion plug in no stage; their
// place here does not matter. The onInstall functions each touch only
// their own feature's state, so their order does not matter either.
// Tests put their own stages and watches around these after New.
var features = [...]func(*Session){
	(*Session).plugBudget,     // budget.go: no stage; its watch first, a run out of budget stops whatever a rule says
	(*Session).plugRetry,      // retry.go
	(*Session).plugTTSR,       // ttsr_watch.go
	(*Session).plugCompaction, // compact_auto.go
	(*Session).plugTodos,      // todo_reminder.go
	(*Session).plugOutput,     // output.go: last, the answer that ends the prompt is checked
	(*Session).plugTruncation, // truncation.go
	(*Session).plugCommands,   // commands.go
}

// plugFeatures plugs the features in, in order (New).
func (s *Session) plugFeatures() {
	for _, plug := range features {
		plug(s)
	}
}

// installed runs the features' onInstall functions once a new record is
// in place. (actor)
func (s *Session) installed() {
	for _, f := range s.onInstall {
		f()
	}
}
