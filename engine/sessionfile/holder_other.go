//go:build unix && !linux

package sessionfile

// holderPid has no source off Linux: a refusal says "another process".
func holderPid(fileKey) int { return 0 }
