//go:build !linux

package sandbox

import (
	"errors"
	"syscall"
)

// Config is what the command supervisor applies (Linux only).
type Config struct {
	Policy   Policy `json:"policy"`
	Landlock bool   `json:"landlock"`
	NetNS    bool   `json:"netns"`
	NetTCP   bool   `json:"netTcp"`
	MountNS  bool   `json:"mountns,omitempty"`
	Mounts   Mounts `json:"mounts"`
	Seccomp  bool   `json:"seccomp,omitempty"`
}

// LandlockABI is 0: Landlock is Linux's.
func LandlockABI() int { return 0 }

// NamespaceAttr is nil: no namespaces here.
func NamespaceAttr() *syscall.SysProcAttr { return nil }

// SysProcAttr is nil: no namespaces here.
func (c Config) SysProcAttr() *syscall.SysProcAttr { return nil }

// Apply fails when it has anything to enforce.
func (c Config) Apply() (Enforcement, error) {
	e := Enforcement{Filesystem: "none", Network: "open"}
	if !c.Policy.Network {
		e.Network = "none"
	}
	if c.Landlock || c.NetNS || c.NetTCP || c.MountNS || c.Seccomp {
		return e, errors.New("the kernel sandbox needs Linux")
	}
	return e, nil
}

// NamespaceError describes err.
func NamespaceError(err error) string { return err.Error() }
