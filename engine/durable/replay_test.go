package durable

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Recorded histories of real runs on the dev server replay through
// today's workflow code: a change that makes other decisions from the
// same recorded facts (non-determinism) fails here before it strands a
// running session. testdata/*.json: `temporal workflow show --output
// json` of the sessions docs/durable.md names: prompt_tool_loop (a tool
// call), host_tool_update (a host tool's call, its update and result, a
// worker killed while the host works), continue_as_new_at_compaction and
// continue_as_new_next_run (a compaction's run and the run it continued
// as), dialog_ask (a question answered, one withdrawn by an abort),
// dialog_worker_killed (a confirmation answered after its worker died),
// confirm_timeout (a confirmation's timeout on workflow time),
// overflow_recovery (a request sent again after an overflow's
// compaction, then continue-as-new), compact_manual with
// compact_manual_next_run (compact refused, done and continued as new;
// refused Already compacted, and cancelled by an abort),
// ttsr_rule_injected (a rule cuts a call, its pause and the run again,
// behind the xcsh.ttsr version marker) and todo_reminder (three
// reminders, todo_write with the list, set_todos).
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(Session, workflow.RegisterOptions{Name: WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatal(err)
			}
		})
	}
}
