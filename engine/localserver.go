package engine

import (
	"errors"
	"net"
	"syscall"
)

// LocalRefused reports whether err is a connection refused by a loopback
// address: a server on this machine (Ollama, llama.cpp, LM Studio) that is
// not running. Nothing will listen there a few seconds later either, so
// adapters report it as ErrorNoServer, which the engine does not retry: the
// user learns at once that the server is down, not after the retries'
// 14 s of silence. A refused connection to another host (a server behind a
// load balancer that is restarting) stays a transport failure, retried.
func LocalRefused(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" || !errors.Is(err, syscall.ECONNREFUSED) {
		return false
	}
	switch a := op.Addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true // a socket file is on this machine
	}
	return false
}
