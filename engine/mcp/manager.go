package mcp

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/childenv"
)

// Defaults of the Options durations.
const (
	DefaultCallTimeout  = 2 * time.Minute  // one tool call
	DefaultStartTimeout = 30 * time.Second // connect, initialize and list the tools
	DefaultSettleWait   = 30 * time.Second // how long a model call waits for servers still starting (npx may download one)
	DefaultRestartEvery = time.Minute      // a failed server is started again at most this often
)

// Options configure a Manager.
type Options struct {
	Cwd      string
	AgentDir string // for <agentDir>/mcp.json
	// ConfigPaths are the --mcp-config files, read first (relative to Cwd).
	ConfigPaths []string
	// Servers are given by the program instead of a file: the servers an
	// ACP client passes with session/new. They come before every file's,
	// and a name they use wins over the files' (which are warned about).
	Servers []Server
	// NoConfigFiles reads no configuration file: only Servers start
	// (--no-mcp still honours what an ACP client asks for).
	NoConfigFiles bool
	// Getenv expands ${VAR} in the configuration; nil: os.Getenv. The
	// variables an entry names leave every other child's environment
	// (engine/childenv), process-wide.
	Getenv func(string) string
	Clock  engine.Clock // restart pacing and call timeouts; nil: the system clock
	Log    io.Writer    // warnings and the servers' stderr, redacted; nil discards
	// Version is the client version sent to servers.
	Version                                             string
	CallTimeout, StartTimeout, SettleWait, RestartEvery time.Duration
	// Admit decides about the servers of the project's own files
	// (ProjectServer), once, before any of them starts; it may ask the
	// user through host (on the manager's goroutine, after the session is
	// ready) and returns one Admission per server, in order. nil runs them
	// all as they are.
	Admit func(ctx context.Context, host Host, servers []ProjectServer) []Admission
}

// Host is what the manager needs of the session: its executor, its tool
// groups and its UI. *engine.Session is one.
type Host interface {
	// Call runs fn on the session's executor and waits for it.
	Call(fn func())
	// SetToolGroup replaces a group's tools (on the executor) and says
	// which it did not install, and why.
	SetToolGroup(group string, tools []engine.Tool) (skipped []engine.SkippedTool)
	// Dialog asks the user (a goroutine of ours, never the executor).
	Dialog(ctx context.Context, req engine.DialogRequest) (engine.DialogReply, error)
}

// Manager owns the MCP servers of one session. It is an engine.ToolSource.
type Manager struct {
	o    Options
	host Host

	// ctx lives as long as the manager: Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts every goroutine the manager starts; Close waits for it.
	wg sync.WaitGroup

	// loaded is closed once every server has begun starting; servers and
	// red are written in New and read by others only after it.
	loaded  chan struct{}
	servers []*server
	red     redactor
	logMu   sync.Mutex // one line at a time on Log
}

var _ engine.ToolSource = (*Manager)(nil)

// New returns a manager; Start begins the work.
func New(o Options) *Manager {
	if o.Clock == nil {
		o.Clock = engine.SystemClock{}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.SettleWait <= 0 {
		o.SettleWait = DefaultSettleWait
	}
	if o.RestartEvery <= 0 {
		o.RestartEvery = DefaultRestartEvery
	}
	m := &Manager{o: o, loaded: make(chan struct{})}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.load()
	return m
}

// load reads the configuration (a few small files) and removes the
// variables that hold the servers' secrets from every other child's
// environment. It runs in New, before the session exists: no command, no
// extension and no supervisor started after it sees them.
func (m *Manager) load() {
	getenv := m.o.Getenv
	if getenv == nil {
		getenv = osGetenv
	}
	cfgs := loadConfigs(m.o, getenv, m.warnf)
	childenv.Drop(secretEnv(cfgs, osEnviron())...)
	var secrets []string
	for _, c := range cfgs {
		secrets = append(secrets, c.secrets...)
	}
	m.red = newRedactor(secrets)
	for _, c := range cfgs {
		m.servers = append(m.servers, newServer(m, c))
	}
}

// Start starts every server in the background: it returns at once.
// Nothing happens before after is closed (the session's Ready: spawning
// processes competes for the CPU with the start-up, so the servers start
// once the session has answered ready and read its resources); nil starts
// at once.
func (m *Manager) Start(host Host, after <-chan struct{}) {
	m.host = host
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if after != nil {
			select {
			case <-after:
			case <-m.ctx.Done():
				close(m.loaded)
				return
			}
		}
		// Every start is begun before loaded is closed: a Settle that sees
		// loaded then waits for them (begun after, a start could be missed).
		// The user's servers start at once; the project's once admitted
		// (which may wait for the user's answer).
		begin := func(project bool) {
			for _, s := range m.servers {
				if s.cfg.Project != project {
					continue
				}
				if ch := s.beginStart(); ch != nil {
					m.goBackground(func() { s.runStart(ch) })
				}
			}
		}
		begin(false)
		m.admit(m.servers)
		if m.ctx.Err() == nil {
			begin(true)
		}
		close(m.loaded)
	}()
}

// Settle implements engine.ToolSource: it waits (at most SettleWait) for
// the configuration and for servers still starting, then re-reads the
// tool lists that may have changed, so the next model call offers them.
func (m *Manager) Settle(ctx context.Context) {
	if m.host == nil {
		return
	}
	lctx, lcancel := context.WithTimeout(ctx, m.o.SettleWait)
	defer lcancel()
	select {
	case <-m.loaded:
	case <-lctx.Done():
		return
	}
	// A server given a longer startupTimeout is waited for that long.
	wait := m.o.SettleWait
	for _, s := range m.servers {
		wait = max(wait, s.cfg.StartTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, s := range m.servers {
		s.waitStarted(ctx)
	}
	for _, s := range m.servers {
		// A refresh the server's own notification started may hold the
		// new list: the model call waits for it too.
		s.settleList(ctx)
	}
}

// Servers implements engine.ToolSource. It never blocks on a server.
func (m *Manager) Servers() []engine.ServerStatus {
	select {
	case <-m.loaded:
	default:
		return nil
	}
	out := make([]engine.ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	return out
}

// Close stops every server (stdin closed, then the process group killed)
// and waits for the manager's goroutines.
func (m *Manager) Close() {
	m.cancel()
	select {
	case <-m.loaded:
	default:
		m.wg.Wait() // the loader ends promptly: it only reads files
	}
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.shutdown()
		}()
	}
	wg.Wait()
	m.wg.Wait()
}

// warnf writes one redacted warning line to the log.
func (m *Manager) warnf(format string, args ...any) {
	m.logf("Warning: "+format, args...)
}

func (m *Manager) logf(format string, args ...any) {
	line := m.red.text(fmt.Sprintf(format, args...))
	m.logMu.Lock()
	defer m.logMu.Unlock()
	fmt.Fprintln(m.o.Log, line)
}

// goBackground runs fn on a goroutine the manager owns.
func (m *Manager) goBackground(fn func()) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		fn()
	}()
}
