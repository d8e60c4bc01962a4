package rpctest

// The epipe command: a live process whose stdout the script can cut, to
// show how xcsh ends when its host goes away (EPIPE). Kept apart from the
// rpc command's files; the process it starts is driven with rpc send,
// wait, expect and close like any other.

import (
	"context"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

const epipeUsage = `usage:
	epipe start  [--name N] [KEY=VALUE...] program [args...]
	epipe stall  [--name N]
	epipe resume [--name N]
	epipe blocked [--name N]
	epipe cut    [--name N]`

// epipeGates maps each *liveProc started by epipe start to the gate its
// stdout copy passes through: stall closes the gate (the harness stops
// reading, as a host that stops reading its agent's output), resume opens
// it again.
var epipeGates sync.Map

// gate blocks reads while closed.
type gate struct {
	mu   sync.Mutex
	open chan struct{} // closed while the gate is open
}

func newGate() *gate {
	g := &gate{open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gate) stall() {
	g.mu.Lock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
	g.mu.Unlock()
}

func (g *gate) resume() {
	g.mu.Lock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
	g.mu.Unlock()
}

func (g *gate) wait() {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	<-ch
}

// gatedReader reads through a gate.
type gatedReader struct {
	g *gate
	r io.Reader
}

func (r gatedReader) Read(p []byte) (int, error) {
	r.g.wait()
	return r.r.Read(p)
}

// epipeReaders maps each *liveProc started by epipe start to our read end
// of its stdout. The key is unique to one script's process, so parallel
// scripts never share an entry; the harness state struct is not extended
// so that this command stays in its own file.
var epipeReaders sync.Map

// scriptEPIPE implements epipe. `epipe start` is `rpc start` with a
// stdout the harness can close; `epipe cut` closes it, so the process's
// next write to stdout fails with EPIPE, as when a host exits or closes
// its end. Frames read before the cut stay available to rpc expect and
// rpc close.
func scriptEPIPE(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("%s", epipeUsage)
	}
	sub, args := args[0], args[1:]
	name, args := cutNameFlag(ts, args)
	h := harnessOf(ts)
	switch sub {
	case "start":
		if p := h.procs[name]; p != nil && !p.closed {
			ts.Fatalf("epipe start: process %q is still running; rpc close it or pick another --name", name)
		}
		var extra []string
		for len(args) > 0 && isEnvAssignment(args[0]) {
			extra, args = append(extra, args[0]), args[1:]
		}
		if len(args) == 0 {
			ts.Fatalf("%s", epipeUsage)
		}
		path, err := scriptLookPath(ts, args[0])
		if err != nil {
			ts.Fatalf("epipe start: %v", err)
		}
		dir := ts.MkAbs(".")
		env := make([]string, 0, len(h.envKeys)+len(extra)+1)
		for _, k := range h.envKeys {
			env = append(env, k+"="+ts.Getenv(k))
		}
		env = append(append(env, "PWD="+dir), extra...)
		p, err := startCuttableProc(name, path, args[1:], dir, env)
		if err != nil {
			ts.Fatalf("epipe start: %v", err)
		}
		h.procs[name] = p
		ts.Defer(func() {
			// A script that failed while stalled must not wait for ever
			// for a process blocked on its stdout.
			if g, ok := epipeGates.Load(p); ok {
				g.(*gate).resume()
			}
			p.stop(ts)
		})
	case "stall", "resume":
		if len(args) != 0 {
			ts.Fatalf("%s", epipeUsage)
		}
		p := h.procs[name]
		if p == nil {
			ts.Fatalf("epipe %s: no process named %q", sub, name)
		}
		g, ok := epipeGates.Load(p)
		if !ok {
			ts.Fatalf("epipe %s: process %q was not started with epipe start", sub, name)
		}
		if sub == "stall" {
			g.(*gate).stall()
		} else {
			g.(*gate).resume()
		}
	case "blocked":
		// Waits until the process is blocked writing its stdout: the
		// stalled pipe holds what it wrote, and one of its threads waits in
		// a pipe write.
		if len(args) != 0 {
			ts.Fatalf("%s", epipeUsage)
		}
		p := h.procs[name]
		if p == nil {
			ts.Fatalf("epipe blocked: no process named %q", name)
		}
		r, ok := epipeReaders.Load(p)
		if !ok {
			ts.Fatalf("epipe blocked: process %q was not started with epipe start, or is cut or gone", name)
		}
		deadline := time.Now().Add(conditionBound)
		for {
			unread, blocked, err := pipeBlocked(r.(*os.File), p.cmd.Process.Pid)
			if err != nil {
				ts.Fatalf("epipe blocked: %v", err)
			}
			if blocked {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("epipe blocked: after %v the pipe holds %d unread bytes and no thread of the process waits in a pipe write (did you epipe stall?)", conditionBound, unread)
			}
			time.Sleep(pollEvery)
		}
	case "cut":
		if len(args) != 0 {
			ts.Fatalf("%s", epipeUsage)
		}
		p := h.procs[name]
		if p == nil {
			ts.Fatalf("epipe cut: no process named %q", name)
		}
		r, ok := epipeReaders.LoadAndDelete(p)
		if !ok {
			ts.Fatalf("epipe cut: process %q was not started with epipe start, or is already cut or gone", name)
		}
		if err := r.(*os.File).Close(); err != nil {
			ts.Fatalf("epipe cut: %v", err)
		}
	default:
		ts.Fatalf("epipe: unknown subcommand %q\n%s", sub, epipeUsage)
	}
}

// startCuttableProc is startProc with stdout an os.Pipe whose read end we
// hold (exec's own copying goroutine keeps its pipe private). A goroutine
// copies it into the frame log until EOF or the cut.
func startCuttableProc(name, path string, args []string, dir string, env []string) (*liveProc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errOut, errFile, err := newStderrFile()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = inR
	cmd.Stdout = outW
	p := &liveProc{
		name:   name,
		cmd:    cmd,
		cancel: cancel,
		stdin:  inW,
		out:    newFrameLog(),
		errOut: errOut,
		exited: make(chan struct{}),
	}
	cmd.Stderr = errFile
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = procWaitDelay
	err = cmd.Start()
	// The child has its copies; ours would hide its exit (stdin) and keep
	// our reader from seeing EOF (stdout).
	inR.Close()
	outW.Close()
	errFile.Close()
	if err != nil {
		cancel()
		inW.Close()
		outR.Close()
		errOut.release()
		return nil, err
	}
	epipeReaders.Store(p, outR)
	g := newGate()
	epipeGates.Store(p, g)
	copied := make(chan struct{})
	go func() {
		// Ends at EOF, or with an error once the script cuts the pipe.
		_, _ = io.Copy(p.out, gatedReader{g, outR})
		close(copied)
	}()
	go func() {
		p.waitErr = cmd.Wait()
		// A grandchild holding stdout must not keep the log open: bound
		// the wait for EOF as exec's WaitDelay does.
		select {
		case <-copied:
		case <-time.After(procWaitDelay):
			if r, ok := epipeReaders.LoadAndDelete(p); ok {
				r.(*os.File).Close()
			}
			<-copied
		}
		if r, ok := epipeReaders.LoadAndDelete(p); ok {
			r.(*os.File).Close() // at EOF: nothing more to read
		}
		p.out.finish()
		close(p.exited)
	}()
	return p, nil
}
