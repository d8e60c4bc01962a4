//go:build linux && !amd64 && !arm64

package sandbox

// nativeTables is nil: the filter is built for amd64 and arm64 only, and
// read-only mode refuses to start elsewhere (errNoFilter) unless
// --sandbox-fallback.
func nativeTables() []syscallTable { return nil }
