package engine

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
)

func TestLocalRefused(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: listen, note it, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, dialErr := net.Dial("tcp", addr)
	if dialErr == nil {
		t.Skip("something listens on the closed port again")
	}
	refusedRemote := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 11434}, Err: syscall.ECONNREFUSED}
	timeoutLocal := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 11434}, Err: syscall.ETIMEDOUT}
	readLocal := &net.OpError{Op: "read", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 11434}, Err: syscall.ECONNREFUSED}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"refused by 127.0.0.1":      {dialErr, true},
		"wrapped twice":             {fmt.Errorf("post: %w", &ProviderError{Kind: ErrorTransport, Err: dialErr}), true},
		"refused by another host":   {refusedRemote, false},
		"loopback, not refused":     {timeoutLocal, false},
		"refused, but not the dial": {readLocal, false},
		"no network error":          {errors.New("connection refused"), false},
		"nil":                       {nil, false},
	} {
		if got := LocalRefused(tc.err); got != tc.want {
			t.Errorf("%s: LocalRefused(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
}
