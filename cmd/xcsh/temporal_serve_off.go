//go:build !temporal

package main

import (
	"io"

	"github.com/xcsh-go/xcsh/rpc/serve"
)

// serveRemote is serve's --temporal, which this build has not
// (temporal_off.go says why): the error every Temporal flag gives.
func serveRemote(o *options, _ io.Writer) (serve.RemoteSessions, func(), error) {
	if o.temporal.address == "" {
		return nil, func() {}, nil
	}
	return nil, nil, &exitError{2, noTemporal}
}
