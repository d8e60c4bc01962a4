package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// Activities are the work of a session's steps, on a worker: the worker's
// configuration (provider, model, tools) lives here, never in the
// workflow's history.
type Activities struct {
	Provider     engine.Provider
	Model        engine.Model
	SystemPrompt string
	Thinking     engine.ThinkingLevel
	Tools        []engine.Tool
	Validator    engine.Validator // nil: arguments are not validated
	Compaction   engine.CompactionSettings
	Clock        engine.Clock // nil: the system clock
	// Publish pushes a model call's deltas to the fronts (nil: PostDeltas).
	Publish func(ctx context.Context, endpoints []string, step string, frames <-chan []byte)
	// AfterTool, if set, is called when a tool has run and before its
	// result is reported: the scenarios' crash point (a worker that dies
	// there lost a call that took effect), nil in production.
	AfterTool func(name string)

	// Gate, if set, may stop a validated call before its tool runs, as
	// engine.Config.Gate does in process (the confirmation policies); its
	// questions are the workflow's to ask (dialogs.go).
	Gate func(ctx context.Context, call engine.ToolCall) *engine.ToolResult
	// Rules are the TTSR rules a model call is watched with (the
	// configured ones and the project's: engine.ResourceRules); Cwd, the
	// directory the tools run in, makes the paths a tool call names
	// relative for their globs, and is an export's cwd (Setup.Cwd).
	Rules []*engine.Rule
	Cwd   string
	// StreamIdleTimeout is the stall watchdog's (engine.WatchStall: 0 the
	// engine's default, negative none).
	StreamIdleTimeout time.Duration
	// TodoClearDelay is how long a finished task stays in the todo list
	// (0: engine.DefaultTodoClearDelay; negative: it stays).
	TodoClearDelay time.Duration
	// Hooks are the extensions' (the worker's extension host; nil: none):
	// their context, before_provider_request, tool_call and tool_result
	// hooks run in the steps, as in process. A worker refuses to start
	// with the hooks a step cannot run (cmd/xcsh: input, before_agent_start).
	Hooks engine.Hooks
}

// Setup is ActivitySetup: what this worker's configuration offers.
func (a *Activities) Setup(ctx context.Context) (Setup, error) {
	m := a.Model
	m.Headers = nil
	st := Setup{Model: m, SystemPrompt: a.SystemPrompt, Thinking: a.Thinking, Compaction: a.Compaction, TodoClearDelay: a.TodoClearDelay,
		Cwd: a.Cwd}
	for _, t := range a.Tools {
		st.Tools = append(st.Tools, ToolInfo{Name: t.Name(), Description: t.Description(), Schema: t.Schema(), Idempotent: engine.IsIdempotent(t)})
	}
	return st, nil
}

func (a *Activities) clock() engine.Clock {
	if a.Clock == nil {
		return engine.SystemClock{}
	}
	return a.Clock
}

// heartbeat records a heartbeat every period until stop is called: a step
// that runs long still shows Temporal its worker is alive, and hears an
// abort (the heartbeat's answer cancels ctx).
func heartbeat(ctx context.Context, period time.Duration) (stop func()) {
	if period <= 0 {
		period = time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func heartbeatPeriod(ctx context.Context) time.Duration {
	return activity.GetInfo(ctx).HeartbeatTimeout / 3
}

// CallModel is ActivityModel: one model call. Its deltas go to the fronts as
// they come (best effort); its result is the finished message. A
// provider's failure is part of the result (the workflow's retry decides
// on it); only a lost worker or a cancellation fails the activity.
func (a *Activities) CallModel(ctx context.Context, in ModelInput) (ModelOutput, error) {
	msgs, err := decodeMessages(in.Messages)
	if err != nil {
		return ModelOutput{}, err
	}
	stop := heartbeat(ctx, heartbeatPeriod(ctx))
	defer stop()
	req := &engine.Request{Model: a.Model, SystemPrompt: a.SystemPrompt}
	if a.Thinking != engine.ThinkingOff {
		req.ThinkingLevel = a.Thinking
	}
	for _, t := range a.Tools {
		req.Tools = append(req.Tools, engine.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
	}
	for _, t := range in.HostTools {
		req.Tools = append(req.Tools, engine.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	// The extensions' context and before_provider_request hooks, as in
	// process (they run on this worker, in its extension host).
	engine.HookRequest(ctx, a.Hooks, req, msgs)
	reply := engine.NewReply(engine.AssistantMessage{API: a.Model.API, Provider: a.Model.Provider, Model: a.Model.ID,
		StopReason: engine.StopStop, Timestamp: in.Timestamp}, a.Model.Cost)
	var frames chan []byte
	var pub sync.WaitGroup
	if len(in.Endpoints) > 0 {
		frames = make(chan []byte, 256)
		publish := a.Publish
		if publish == nil {
			publish = PostDeltas
		}
		pub.Add(1)
		go func() { defer pub.Done(); publish(ctx, in.Endpoints, in.Step, frames) }()
	}
	emit := func(ev engine.Event) {
		if frames == nil {
			return
		}
		select {
		case frames <- ev.AppendJSON(nil):
		default: // best effort: a slow front loses deltas, never the message
		}
	}
	watch := a.watchCall(ctx, in.Injected) // callwatch.go: stalls and TTSR rules
	serr := a.Provider.Stream(watch.ctx, req, func(ev engine.StreamEvent) error {
		if err := watch.before(); err != nil {
			return err
		}
		reply.Apply(ev, emit)
		return watch.after(ev)
	})
	serr, cut := watch.end(serr)
	if frames != nil {
		close(frames)
		pub.Wait()
	}
	if ctx.Err() != nil {
		return ModelOutput{}, ctx.Err()
	}
	msg := reply.Finish(false, cut, serr)
	out := ModelOutput{Message: encodeMessage(msg)}
	watch.report(&out)
	for _, c := range msg.ToolCalls() {
		if t := engine.CutText(c); t != "" {
			if out.Cut == nil {
				out.Cut = map[string]string{}
			}
			out.Cut[c.ID] = t
		}
	}
	var pe *engine.ProviderError
	if serr != nil && errors.As(serr, &pe) {
		out.ErrTyped, out.ErrKind = true, pe.Kind
		out.RetryAfterMs = engine.RetryDelay(a.clock(), 0, 1, msg, serr).Milliseconds()
	}
	return out, nil
}

// RunTool is ActivityTool: one tool call, checked as in process
// (engine.CheckToolCall), heartbeating while it runs.
func (a *Activities) RunTool(ctx context.Context, in ToolInput) (ToolOutput, error) {
	var tool engine.Tool
	for _, t := range a.Tools {
		if t.Name() == in.Name {
			tool = t
		}
	}
	call := engine.ContentBlock{Type: engine.BlockToolCall, ID: in.ID, Name: in.Name, Arguments: in.Arguments}
	if res := engine.CheckToolCall(call, tool, a.Validator); res != nil {
		return toolOutput(*res), nil
	}
	stop := heartbeat(ctx, heartbeatPeriod(ctx))
	defer stop()
	args := []byte(in.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	// The extensions' tool_call hook may block the call or rewrite its
	// arguments, as in process. It runs again when the call runs again
	// after a question (dialogs.go): a hook decides, it does not act.
	args, blocked := engine.RunToolCallHook(ctx, a.Hooks, in.ID, in.Name, args)
	if blocked != nil {
		return toolOutput(*blocked), nil
	}
	// The gate, then the tool, each of whose questions may stop the call
	// (dialogs.go).
	out, cancelled, err := a.execTool(ctx, tool, in, args)
	if !cancelled && out.Ask == nil {
		out = toolOutput(engine.RunToolResultHook(ctx, a.Hooks, in.ID, in.Name, args, out.result()))
	}
	if cancelled {
		// Cancelled (an abort): the tool's own answer, when it gave one,
		// travels with the cancellation so the workflow records what the
		// in-process loop would show (bash: "Command aborted").
		if err == nil {
			return ToolOutput{}, temporal.NewCanceledError(out)
		}
		return ToolOutput{}, ctx.Err()
	}
	return out, nil
}

// ToolOutputOf is a result as recorded (the front records a host's
// reply with it).
func ToolOutputOf(r engine.ToolResult) ToolOutput { return toolOutput(r) }

// Compact is ActivityCompact: the engine's compaction of the context
// (engine.CompactContext), automatic or by hand, its summary calls made
// with this worker's provider and model, heartbeating while they run.
func (a *Activities) Compact(ctx context.Context, in CompactInput) (CompactOutput, error) {
	msgs, err := decodeMessages(in.Messages)
	if err != nil {
		return CompactOutput{}, err
	}
	stop := heartbeat(ctx, heartbeatPeriod(ctx))
	defer stop()
	res, out, err := engine.CompactContext(ctx, engine.ContextCompaction{Provider: a.Provider, Model: a.Model,
		Settings: a.Compaction, Clock: a.clock(), RetryBase: msToDuration(in.RetryBaseMs),
		CustomInstructions: in.CustomInstructions, Kept: in.Kept}, msgs, in.Reason)
	if ctx.Err() != nil {
		return CompactOutput{}, ctx.Err()
	}
	if in.Reason == ReasonManual {
		return manualOutcome(res, out, err), nil // compact_manual.go
	}
	end := engine.AutoCompactionOutcome(in.Reason, in.WillRetry, res, err, false)
	o := CompactOutput{End: end.AppendJSON(nil)}
	if end.Result != nil {
		o.Messages = encodeMessages(out)
	}
	return o, nil
}

// ErrNoDialogs answers the question of a tool that may ask after it has
// taken effect (not QuestionsFirst: an extension's or an MCP server's
// tool): a durable session asks only where the call can stop and run
// again once answered (dialogs.go, docs/durable.md "Dialogs").
var ErrNoDialogs = errors.New("this tool may ask after it has taken effect, and a durable session asks the user only before a tool takes effect")

// CheckCall is ActivityCheck: a host tool call checked as in process
// (engine.CheckToolCall with this worker's Validator); nil: it may go to
// the host.
func (a *Activities) CheckCall(ctx context.Context, in CheckInput) (*ToolOutput, error) {
	call := engine.ContentBlock{Type: engine.BlockToolCall, ID: in.Call.ID, Name: in.Call.Name, Arguments: in.Call.Arguments}
	if res := engine.CheckToolCall(call, schemaTool{in.Tool}, a.Validator); res != nil {
		out := toolOutput(*res)
		return &out, nil
	}
	return nil, nil
}

// schemaTool is a host tool as CheckToolCall sees it: a name and a schema
// (it never runs here).
type schemaTool struct{ t HostTool }

func (s schemaTool) Name() string                  { return s.t.Name }
func (s schemaTool) Description() string           { return s.t.Description }
func (s schemaTool) Schema() []byte                { return s.t.Parameters }
func (schemaTool) Concurrency() engine.Concurrency { return engine.Shared }
func (s schemaTool) Run(context.Context, engine.ToolCall, func(engine.ToolResult)) (engine.ToolResult, error) {
	return engine.ToolResult{}, errors.New("durable: a host tool runs on the host")
}

func toolOutput(r engine.ToolResult) ToolOutput {
	return ToolOutput{Content: r.Content, Details: r.Details, IsError: r.IsError, IsWarning: r.IsWarning, Raw: r.Raw}
}

// Delta is one pushed frame: the step it belongs to and its
// message_update.
type Delta struct {
	Step  string          `json:"step"`
	Frame json.RawMessage `json:"frame"`
}

// PostDeltas pushes a model call's frames to each endpoint (an HTTP URL
// a front listens on) as one streamed POST of JSON lines. Best effort: a
// front that is gone costs the call nothing.
func PostDeltas(ctx context.Context, endpoints []string, step string, frames <-chan []byte) {
	var writers []*deltaPost
	for _, e := range endpoints {
		writers = append(writers, newDeltaPost(ctx, e))
	}
	for f := range frames {
		line, _ := json.Marshal(Delta{Step: step, Frame: f})
		line = append(line, '\n')
		for _, w := range writers {
			w.write(line)
		}
	}
	for _, w := range writers {
		w.close()
	}
}

// deltaPost is one streamed request to a front.
type deltaPost struct {
	pw   *pipeWriter
	done chan struct{}
}

func newDeltaPost(ctx context.Context, url string) *deltaPost {
	pr, pw := newPipe()
	d := &deltaPost{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, pr)
		if err != nil {
			pr.CloseWithError(err)
			return
		}
		req.Header.Set("Content-Type", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			pr.CloseWithError(err)
			return
		}
		resp.Body.Close()
	}()
	return d
}

func (d *deltaPost) write(line []byte) { d.pw.write(bytes.Clone(line)) }
func (d *deltaPost) close()            { d.pw.close(); <-d.done }

// Register registers the workflow and a's activities under their names
// on w (a worker.Worker or the test environment).
func (a *Activities) Register(w interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}) {
	w.RegisterWorkflowWithOptions(Session, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(a.Setup, activity.RegisterOptions{Name: ActivitySetup})
	w.RegisterActivityWithOptions(a.CallModel, activity.RegisterOptions{Name: ActivityModel})
	w.RegisterActivityWithOptions(a.RunTool, activity.RegisterOptions{Name: ActivityTool})
	w.RegisterActivityWithOptions(a.CheckCall, activity.RegisterOptions{Name: ActivityCheck})
	w.RegisterActivityWithOptions(a.Compact, activity.RegisterOptions{Name: ActivityCompact})
}
