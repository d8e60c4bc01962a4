package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
)

// DefaultDeadline bounds every hook of an extension unless its Spec says
// otherwise.
const DefaultDeadline = 5 * time.Second

// MaxDeadline caps an extension's deadline (its timeout): a longer one is
// taken as this, with a note in the log. A hook that takes longer is
// stuck, and holds the run that waits for it.
const MaxDeadline = time.Minute

// MaxHandshake bounds the handshake, whatever the deadline: starting a
// process (a Python or Node interpreter) on a loaded machine takes far
// longer than answering a hook (5 s was seen to run out under load, and the
// extension was then lost), and the session's ready waits for the
// handshakes, so a hung extension must not hold it longer than this.
const MaxHandshake = 10 * time.Second

// Spec is one extension to run: what discovery found.
type Spec struct {
	// Path names the extension in extension_error frames and logs: the
	// executable or the directory it was found as.
	Path string
	// Command is the program and its arguments.
	Command []string
	// Deadline bounds each of its hooks (0: DefaultDeadline; at most
	// MaxDeadline); its handshake has MaxHandshake.
	Deadline time.Duration
	// Project says the project found it (<cwd>/.xcsh/extensions/ or
	// <cwd>/.xcsh/settings.json), not the user: under a sandbox the
	// program decides whether and how it runs (cmd/xcsh's trust policy).
	Project bool
	// Wrap, when set, changes its command before it starts (to run it
	// confined).
	Wrap func(*exec.Cmd) error
}

// Options configure a Host. cmd/xcsh builds them.
type Options struct {
	Specs []Spec
	// Problems are what discovery could not use: reported with the load
	// failures, as extension_error frames, once Begin is called.
	Problems []engine.ExtensionError
	Version  string // the agent's, sent in initialize
	Cwd      string // the session's working directory: where extensions run
	// Env is the environment every extension starts with (the agent's,
	// without the provider keys: see cmd/xcsh); nil: the agent's own.
	Env   []string
	Flags map[string]string // --extension-flag values, sent in initialize
	// HasUI says whether a host answers dialogs (RPC mode); without one a
	// dialog resolves to its default at once.
	HasUI bool
	// Sessionless is a host that never gets a session (a durable worker's:
	// the steps run its hooks and tools). Its extensions' questions to the
	// user are dismissed at once (a confirmation declines), not refused, so
	// a hook that asks before a dangerous call blocks it as it does
	// without a UI; their other calls to the agent are refused.
	Sessionless bool
	Clock       engine.Clock
	Log         io.Writer // stderr: the extensions' stderr and the host's notes
	// QueueBytes bounds what may wait to be written to one extension
	// (default 64 MiB); MaxLine bounds one line it writes (default 16 MiB).
	QueueBytes, MaxLine int
	// Grace bounds each step of stopping an extension (default 1 s).
	Grace time.Duration
	// Handshake bounds each handshake (0: MaxHandshake; tests shorten it).
	Handshake time.Duration
	// Validator checks each tool's parameters schema when the extension
	// registers it (Check): a tool whose schema it refuses (one that
	// refers outside itself, which is never loaded) is not registered, as
	// one with a taken name is not. nil: schemas are not checked.
	Validator engine.Validator
}

// Host runs the session's extensions: it starts them, forwards the events
// they subscribed to, asks them at the session's hook points
// (engine.Hooks), serves their calls with the session's verbs, and
// isolates their faults: an extension that fails a hook is reported and
// skipped; one that dies or stops reading is removed with its tools.
type Host struct {
	opts Options
	sess *engine.Session

	// wg counts every goroutine the host starts; Shutdown waits for them.
	wg sync.WaitGroup

	mu sync.RWMutex
	// exts are the live extensions in load order; guarded by mu.
	exts []*ext
	// loadErrs are the faults found before Begin (reported then).
	loadErrs []engine.ExtensionError
	begun    bool
	// sessionID is the current session's id: calls naming another are
	// stale; guarded by mu.
	sessionID string
	// universe are the tools setActiveTools may pick from: the session's
	// at load, then the extensions'; guarded by mu.
	universe []engine.Tool

	// subs is the union of the live extensions' subscriptions, read on
	// hot paths without a lock (Has, the tap).
	subs atomic.Uint64
}

// New returns a host for opts.Specs; Load starts them.
func New(opts Options) *Host {
	if opts.Clock == nil {
		opts.Clock = engine.SystemClock{}
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = 64 << 20
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = jsonrpc.MaxLine
	}
	if opts.Grace <= 0 {
		opts.Grace = time.Second
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	return &Host{opts: opts}
}

func (h *Host) logf(format string, args ...any) {
	fmt.Fprintf(h.opts.Log, "xcsh: "+format+"\n", args...)
}

// deadline is e's bound for its hooks.
func (e *ext) deadline() time.Duration {
	if e.spec.Deadline > 0 {
		return min(e.spec.Deadline, MaxDeadline)
	}
	return DefaultDeadline
}

// handshakeDeadline is e's bound for its handshake.
func (e *ext) handshakeDeadline() time.Duration {
	if d := e.h.opts.Handshake; d > 0 {
		return min(d, MaxHandshake)
	}
	return MaxHandshake
}

// initParams is the initialize request.
type initParams struct {
	ProtocolVersion int               `json:"protocolVersion"`
	Agent           agentInfo         `json:"agent"`
	Cwd             string            `json:"cwd"`
	SessionID       string            `json:"sessionId"`
	SessionFile     string            `json:"sessionFile,omitempty"`
	HasUI           bool              `json:"hasUI"`
	Flags           map[string]string `json:"flags"`
}

type agentInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// initResult is the extension's answer to initialize.
type initResult struct {
	Name      string       `json:"name"`
	Subscribe []string     `json:"subscribe"`
	Tools     []toolDef    `json:"tools"`
	Commands  []commandDef `json:"commands"`
}

type toolDef struct {
	Name        string          `json:"name"`
	Label       string          `json:"label"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Concurrency string          `json:"concurrency"` // "shared" (default) or "exclusive"
}

type commandDef struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Load starts every extension in parallel and waits for their handshakes,
// each bounded by its deadline, so the session starts with their tools and
// hooks in place. existing are the session's tools: an extension tool with
// a taken name is refused (first wins), as a command is, and so is one
// whose schema Options.Validator refuses. It returns the
// extensions' tools to offer, in load order. Failures are reported as
// extension_error once Begin is called. sessionID and sessionFile are the
// session the extensions start in.
func (h *Host) Load(ctx context.Context, existing []engine.Tool, sessionID, sessionFile string) []engine.Tool {
	exts := make([]*ext, len(h.opts.Specs))
	errs := make([]error, len(h.opts.Specs))
	var wg sync.WaitGroup
	for i, spec := range h.opts.Specs {
		if spec.Deadline > MaxDeadline {
			h.logf("extension %s: timeout %v is over the cap; %v is used", spec.Path, spec.Deadline, MaxDeadline)
		}
		e := newExt(h, spec)
		exts[i] = e
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.start(ctx, e, sessionID, sessionFile)
		}()
	}
	wg.Wait()

	h.mu.Lock()
	defer h.mu.Unlock()
	h.loadErrs = append(h.loadErrs, h.opts.Problems...)
	h.sessionID = sessionID
	h.universe = append([]engine.Tool(nil), existing...)
	taken := map[string]bool{}
	for _, t := range existing {
		taken[t.Name()] = true
	}
	cmds := map[string]bool{}
	var tools []engine.Tool
	for i, e := range exts {
		if errs[i] != nil {
			// One that died during its handshake was reported then (event
			// exit, with what it was handling): once is enough.
			if !errors.Is(errs[i], errGone) {
				h.loadErrs = append(h.loadErrs, engine.ExtensionError{ExtensionPath: e.spec.Path, Event: "initialize", Error: errs[i].Error()})
			}
			e.kill(errs[i])
			continue
		}
		var keep []toolDef
		for _, d := range e.tools {
			if taken[d.Name] {
				h.loadErrs = append(h.loadErrs, engine.ExtensionError{ExtensionPath: e.spec.Path, Event: "initialize",
					Error: fmt.Sprintf("tool %q conflicts with an existing tool; not registered", d.Name)})
				continue
			}
			if v := h.opts.Validator; v != nil {
				if err := v.Check(d.Parameters); err != nil {
					h.loadErrs = append(h.loadErrs, engine.ExtensionError{ExtensionPath: e.spec.Path, Event: "initialize",
						Error: fmt.Sprintf("tool %q has an unusable JSON Schema: %v; not registered", d.Name, err)})
					continue
				}
			}
			taken[d.Name] = true
			keep = append(keep, d)
			t := &tool{e: e, def: d}
			tools = append(tools, t)
			h.universe = append(h.universe, t)
		}
		e.tools = keep
		var keepCmds []commandDef
		for _, c := range e.commands {
			if cmds[c.Name] {
				h.loadErrs = append(h.loadErrs, engine.ExtensionError{ExtensionPath: e.spec.Path, Event: "initialize",
					Error: fmt.Sprintf("command %q conflicts with an existing command; not registered", c.Name)})
				continue
			}
			cmds[c.Name] = true
			keepCmds = append(keepCmds, c)
		}
		e.commands = keepCmds
		h.exts = append(h.exts, e)
	}
	h.resubscribe()
	return tools
}

// start starts e's process and makes the handshake. (Load)
func (h *Host) start(ctx context.Context, e *ext, sessionID, sessionFile string) error {
	stdin, stdout, err := e.proc.start(e.spec, h.opts.Cwd, h.opts.Env, h.opts.Grace, h.logf)
	if err != nil {
		return fmt.Errorf("cannot start: %w", err)
	}
	h.wg.Add(3)
	readerDone := make(chan struct{})
	go func() { defer h.wg.Done(); e.writeLoop(stdin) }()
	go func() { defer h.wg.Done(); defer close(readerDone); e.readLoop(stdout) }()
	go func() { defer h.wg.Done(); h.watch(e, stdout, readerDone) }()

	flags := h.opts.Flags
	if flags == nil {
		flags = map[string]string{}
	}
	params, _ := json.Marshal(initParams{ProtocolVersion: jsonrpc.Version, Agent: agentInfo{"xcsh", h.opts.Version},
		Cwd: h.opts.Cwd, SessionID: sessionID, SessionFile: sessionFile, HasUI: h.opts.HasUI, Flags: flags})
	raw, err := e.request(ctx, "initialize", params, e.handshakeDeadline())
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var res initResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("initialize: malformed result: %v", err)
	}
	e.name = res.Name
	for _, s := range res.Subscribe {
		bit, ok := names[s]
		if !ok {
			h.logf("extension %s: unknown event %q in subscribe; ignored", e.spec.Path, s)
			continue
		}
		e.subs |= bit
	}
	for _, d := range res.Tools {
		d.Name = strings.TrimSpace(d.Name)
		switch {
		case d.Name == "":
			return errors.New("initialize: a tool has no name")
		case strings.TrimSpace(d.Description) == "":
			return fmt.Errorf("initialize: tool %q has no description", d.Name)
		case !strings.HasPrefix(strings.TrimSpace(string(d.Parameters)), "{"):
			return fmt.Errorf("initialize: tool %q has no JSON Schema object", d.Name)
		}
		e.tools = append(e.tools, d)
	}
	for _, c := range res.Commands {
		c.Name = strings.TrimPrefix(strings.TrimSpace(c.Name), "/")
		if c.Name == "" || strings.ContainsAny(c.Name, " \t\n") {
			return fmt.Errorf("initialize: invalid command name %q", c.Name)
		}
		e.commands = append(e.commands, c)
	}
	if len(e.commands) > 0 {
		e.subs |= bitCommands
	}
	return nil
}

// watch waits for e's process to end. An end the host did not ask for is a
// fault: reported, and the extension removed. A process whose stdout is
// still held open (by something it started) is cut off after the grace.
func (h *Host) watch(e *ext, stdout *os.File, readerDone <-chan struct{}) {
	select {
	case <-e.proc.done():
	case <-readerDone:
		// EOF on stdout: it is exiting (or closed stdout and lives on, which
		// is as good as gone: it can no longer answer).
		t := time.NewTimer(h.opts.Grace)
		select {
		case <-e.proc.done():
		case <-t.C:
			e.proc.kill()
			<-e.proc.done()
		}
		t.Stop()
	}
	t := time.NewTimer(h.opts.Grace)
	select {
	case <-readerDone:
	case <-t.C:
		stdout.Close() // unblocks the reader
	}
	t.Stop()
	e.mu.Lock()
	stopping := e.stopping
	e.mu.Unlock()
	var busy []string
	for _, c := range e.conn.Calls() {
		busy = append(busy, c.Method())
	}
	msg := e.proc.exitText()
	if len(busy) > 0 {
		msg += " while handling " + strings.Join(busy, ", ")
	}
	if stopping {
		e.kill(errors.New(msg))
		return
	}
	h.fail(e, "exit", errors.New(msg))
}

// fail removes e for good: extension_error says why, its tools leave the
// session, then it is killed and what waits on it fails. Only the first
// end of an extension is reported. The report and the removal are posted
// to the session before anything waiting on the extension is released, so
// a tool call it fails is reported after them, in that order.
func (h *Host) fail(e *ext, event string, err error) {
	if !e.claim() {
		return
	}
	defer e.die(err)
	h.mu.Lock()
	for i, x := range h.exts {
		if x == e {
			h.exts = append(h.exts[:i:i], h.exts[i+1:]...)
			break
		}
	}
	var keep []engine.Tool
	for _, t := range h.universe {
		if et, ok := t.(*tool); !ok || et.e != e {
			keep = append(keep, t)
		}
	}
	h.universe = keep
	h.resubscribe()
	sess := h.sess
	h.mu.Unlock()
	h.report(engine.ExtensionError{ExtensionPath: e.spec.Path, Event: event, Error: err.Error()})
	if sess != nil && len(e.tools) > 0 {
		sess.Post(func() {
			var tools []engine.Tool
			for _, t := range sess.Tools() {
				if et, ok := t.(*tool); !ok || et.e != e {
					tools = append(tools, t)
				}
			}
			sess.SetActiveTools(tools)
		})
	}
}

// goFail is fail from a goroutine of its own: for faults found where
// failing at once could wait on the executor (the tap runs on it).
func (h *Host) goFail(e *ext, event string, err error) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.fail(e, event, err)
	}()
}

// report emits an extension_error frame (held until Begin). Never call it
// on the executor.
func (h *Host) report(ee engine.ExtensionError) {
	h.mu.Lock()
	if !h.begun || h.sess == nil {
		h.loadErrs = append(h.loadErrs, ee)
		h.mu.Unlock()
		return
	}
	sess := h.sess
	h.mu.Unlock()
	sess.Post(func() { sess.ReportExtensionError(ee) })
}

// resubscribe recomputes the union of subscriptions. (h.mu held)
func (h *Host) resubscribe() {
	var u uint64
	for _, e := range h.exts {
		u |= e.subs
	}
	h.subs.Store(u)
}

// Attach gives the host the session its extensions work on. Call it
// before Begin and before the session runs.
//
// When an extension subscribed to session_before_compact, the host
// becomes the session's compaction hook. Attach calls the session (Call):
// never call it on the executor.
func (h *Host) Attach(sess *engine.Session) {
	h.mu.Lock()
	h.sess = sess
	h.mu.Unlock()
	if h.subs.Load()&bitBeforeCompact != 0 {
		sess.Call(func() { sess.AddCompactionHook(h.compactionHook) })
	}
}

// Begin reports the faults found while loading and tells the extensions
// the session has started. Call it once the front has announced itself
// (after rpc's ready frame), off the executor.
func (h *Host) Begin() {
	h.mu.Lock()
	h.begun = true
	errs := h.loadErrs
	h.loadErrs = nil
	sess := h.sess
	id := h.sessionID
	h.mu.Unlock()
	if sess == nil {
		return
	}
	for _, ee := range errs {
		sess.Post(func() { sess.ReportExtensionError(ee) })
	}
	sess.Post(func() {
		_, file, _ := sess.Identity()
		h.notify(bitSessionStart, "session_start", sessionStartParams("startup", id, file, ""))
	})
}

// live returns the live extensions subscribed to bit, in load order.
func (h *Host) live(bit uint64) []*ext {
	if h.subs.Load()&bit == 0 {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []*ext
	for _, e := range h.exts {
		if e.subs&bit != 0 {
			out = append(out, e)
		}
	}
	return out
}

// notify sends a notification to the extensions subscribed to bit.
func (h *Host) notify(bit uint64, method string, params []byte) {
	exts := h.live(bit)
	if len(exts) == 0 {
		return
	}
	line := jsonrpc.AppendNotification(nil, method, params)
	for _, e := range exts {
		e.send(line)
	}
}

// Shutdown stops every extension, in parallel and bounded: each is sent
// session_shutdown (if it subscribed), its stdin is closed, and it gets the
// grace to exit before TERM and then KILL reach its process group. It
// returns once they are gone and the host's goroutines have ended, or ctx
// ends.
func (h *Host) Shutdown(ctx context.Context) {
	h.mu.Lock()
	exts := h.exts
	h.exts = nil
	h.resubscribe()
	id := h.sessionID
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range exts {
		e.mu.Lock()
		e.stopping = true
		e.mu.Unlock()
		if e.subs&bitSessionShutdown != 0 {
			e.send(jsonrpc.AppendNotification(nil, "session_shutdown", sessionShutdownParams(id)))
		}
		e.out.close() // stdin is closed once what is queued is written
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.proc.stop(h.opts.Grace)
			e.kill(errors.New("the agent is shutting down"))
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
