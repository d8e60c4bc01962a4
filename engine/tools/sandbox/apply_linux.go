package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Config is what the command supervisor applies to itself before it
// starts any command, so every command and everything it starts is held
// by it: Landlock is inherited across fork and exec and cannot be lifted,
// and a network namespace is inherited too.
type Config struct {
	Policy Policy `json:"policy"`
	// Landlock applies the policy's write rules (false: --sandbox-fallback
	// on a kernel without Landlock).
	Landlock bool `json:"landlock"`
	// NetNS says the supervisor was started in new user and network
	// namespaces (SysProcAttr): it brings their loopback up.
	NetNS bool `json:"netns"`
	// NetTCP refuses every TCP connect and bind with Landlock (ABI 4+):
	// the fallback when the network must be off and no namespace could be
	// made.
	NetTCP bool `json:"netTcp"`
	// MountNS says the process was started in a new mount namespace too
	// (workspace-write, with Landlock, which keeps commands from undoing
	// it): it lays it out as Mounts says before Landlock applies.
	MountNS bool   `json:"mountns,omitempty"`
	Mounts  Mounts `json:"mounts"`
	// Seccomp refuses every metadata change (read-only: the filter of
	// seccomp_linux.go).
	Seccomp bool `json:"seccomp,omitempty"`
}

// writeRights are the Landlock rights the sandbox handles: every way to
// change the file tree. Reads, execution and device ioctls are not
// handled, so they stay allowed.
const writeRights = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
	ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock |
	ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate

// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func LandlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// NamespaceAttr is what the agent adds to the supervisor's start for a
// network namespace (Config{NetNS: true}.SysProcAttr).
func NamespaceAttr() *syscall.SysProcAttr { return Config{NetNS: true}.SysProcAttr() }

// SysProcAttr is what the agent adds to the start of a process that
// applies c (the supervisor, or a confined server: Wrap), nil when c needs
// no namespace: a new user namespace, this user mapped to itself (so
// files keep their owner and `id` its answer), with a network namespace
// for NetNS and a mount namespace for MountNS, and the capability each
// needs kept across the exec just long enough to set it up
// (CAP_NET_ADMIN to bring the loopback up, CAP_SYS_ADMIN to mount; Apply
// drops them before any command starts).
func (c Config) SysProcAttr() *syscall.SysProcAttr {
	if !c.NetNS && !c.MountNS {
		return nil
	}
	uid, gid := os.Getuid(), os.Getgid()
	a := &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	if c.NetNS {
		a.Cloneflags |= syscall.CLONE_NEWNET
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_NET_ADMIN)
	}
	if c.MountNS {
		a.Cloneflags |= syscall.CLONE_NEWNS
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SYS_ADMIN)
	}
	return a
}

// Apply enforces c on the calling process, every thread of it, and so on
// every process it starts afterwards. It returns how it is enforced. It
// never downgrades silently: what cannot be applied is an error.
func (c Config) Apply() (Enforcement, error) {
	e := Enforcement{Filesystem: "none", Network: "open"}
	if c.NetNS {
		if err := loopbackUp(); err != nil {
			return e, fmt.Errorf("bringing up the loopback of the network namespace: %w", err)
		}
		e.Network = "namespace"
	}
	if c.MountNS {
		if !c.Landlock {
			// Without Landlock a command could unmount what protects.
			return e, errors.New("the mount namespace needs Landlock")
		}
		if err := c.Mounts.apply(); err != nil {
			return e, err
		}
		e.Mounts = true
	}
	if c.NetNS || c.MountNS {
		// The commands get no capability: the ambient set is what an exec
		// would keep.
		if err := ll.AllThreadsPrctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
			return e, fmt.Errorf("dropping the namespaces' capabilities: %w", err)
		}
	}
	if !c.Policy.Network && !c.NetNS {
		e.Network = "none"
	}
	if !c.Landlock && !c.NetTCP {
		return e, c.applySeccomp(&e)
	}
	abi := LandlockABI()
	if abi < 1 {
		return e, errors.New("this kernel has no Landlock (Linux 5.13 or later, enabled at boot, is needed)")
	}
	cfg := landlock.Config{}
	if c.Landlock {
		rights := uint64(writeRights)
		if abi < 2 {
			rights &^= ll.AccessFSRefer
		}
		if abi < 3 {
			rights &^= ll.AccessFSTruncate
		}
		cfg.HandledAccessFS = landlock.AccessFSSet(rights)
		if abi >= 6 {
			// Commands may not reach a process outside the sandbox by an
			// abstract Unix socket. Signals are not scoped: before ABI 8
			// every thread of the supervisor gets a domain of its own, and
			// it must still signal the commands another thread started.
			cfg.Scoped = landlock.ScopedSet(ll.ScopeAbstractUnixSocket)
		}
	}
	if c.NetTCP {
		if abi < 4 {
			return e, fmt.Errorf("Landlock ABI %d cannot refuse TCP (4 or later is needed)", abi)
		}
		cfg.HandledAccessNet = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
	}
	var rules []landlock.Rule
	if c.Landlock {
		fsRights := cfg.HandledAccessFS
		if len(c.Policy.Roots) > 0 {
			rules = append(rules, landlock.PathAccess(fsRights, c.Policy.Roots...).IgnoreIfMissing())
		}
		devRights := landlock.AccessFSSet(ll.AccessFSWriteFile) | fsRights&landlock.AccessFSSet(ll.AccessFSTruncate)
		if len(c.Policy.Devices) > 0 {
			rules = append(rules, landlock.PathAccess(devRights, c.Policy.Devices...).IgnoreIfMissing())
		}
	}
	if err := cfg.Restrict(rules...); err != nil {
		return e, fmt.Errorf("applying Landlock: %w", err)
	}
	if c.Landlock {
		e.Filesystem, e.LandlockABI = "landlock", abi
	}
	if c.NetTCP {
		e.Network = "landlock-tcp"
	}
	return e, c.applySeccomp(&e)
}

// applySeccomp installs the read-only filter when c asks for it, last:
// nothing of the set-up above changes metadata, and a command starts
// under every layer.
func (c Config) applySeccomp(e *Enforcement) error {
	if !c.Seccomp {
		return nil
	}
	if err := installMetadataFilter(); err != nil {
		return err
	}
	e.Seccomp = true
	return nil
}

// loopbackUp sets IFF_UP on "lo", so commands can still reach servers they
// start themselves on localhost.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// NamespaceError says, in words, why new namespaces could not be made.
func NamespaceError(err error) string {
	switch {
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return "unprivileged user namespaces are not allowed here (kernel.unprivileged_userns_clone, an AppArmor or SELinux policy)"
	case errors.Is(err, syscall.ENOSPC):
		return "the user namespace limit is reached (user.max_user_namespaces)"
	case errors.Is(err, syscall.EINVAL):
		return "the kernel has no user or network namespaces"
	}
	return strings.TrimPrefix(err.Error(), "fork/exec /proc/self/exe: ")
}
