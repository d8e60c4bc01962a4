package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestMain lets the test binary be the confinement wrapper (Wrap starts
// /proc/self/exe) and the probe the confined tests run in it.
func TestMain(m *testing.M) {
	if IsExec(os.Args) {
		os.Exit(ExecMain())
	}
	if len(os.Args) > 1 && os.Args[1] == probeArg {
		os.Exit(probe(os.Args[2:]))
	}
	os.Exit(m.Run())
}

const probeArg = "__sandbox_probe__"

// probe performs each operation of its arguments ("op:path[:path2]") and
// prints "op path: <errno or ok>" per line, so a test can see what the
// kernel let a confined process do.
func probe(ops []string) int {
	for _, op := range ops {
		name, args, _ := strings.Cut(op, ":")
		a := strings.Split(args, ":")
		var err error
		switch name {
		case "chmod":
			err = unix.Chmod(a[0], 0o777)
		case "fchmod":
			var fd int
			if fd, err = unix.Open(a[0], unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
				err = unix.Fchmod(fd, 0o777)
				unix.Close(fd)
			}
		case "chown":
			err = unix.Chown(a[0], os.Getuid(), os.Getgid())
		case "utime":
			err = unix.UtimesNano(a[0], []unix.Timespec{{Sec: 1}, {Sec: 1}})
		case "setxattr":
			err = unix.Setxattr(a[0], "user.xcsh", []byte("1"), 0)
		case "chattr":
			var fd int
			if fd, err = unix.Open(a[0], unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
				var flags int32
				_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), 0x40086602, uintptr(unsafe.Pointer(&flags)))
				if e != 0 {
					err = e
				}
				unix.Close(fd)
			}
		case "iouring":
			var params [120]byte
			r, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
			if e != 0 {
				err = e
			} else {
				unix.Close(int(r))
			}
		case "write":
			err = os.WriteFile(a[0], []byte("x"), 0o644)
		case "append":
			var f *os.File
			if f, err = os.OpenFile(a[0], os.O_WRONLY|os.O_APPEND, 0); err == nil {
				_, err = f.WriteString("x")
				f.Close()
			}
		case "rename":
			err = os.Rename(a[0], a[1])
		case "remove":
			err = os.Remove(a[0])
		case "mkdir":
			err = os.Mkdir(a[0], 0o755)
		case "umount":
			err = unix.Unmount(a[0], unix.MNT_DETACH)
		default:
			err = fmt.Errorf("unknown op %q", name)
		}
		var errno unix.Errno
		switch {
		case err == nil:
			fmt.Printf("%s %s: ok\n", name, a[0])
		case errors.As(err, &errno):
			fmt.Printf("%s %s: %s\n", name, a[0], unix.ErrnoName(errno))
		default:
			fmt.Printf("%s %s: %v\n", name, a[0], err)
		}
	}
	return 0
}

// confined runs the probe through Wrap under c and returns its lines, or
// skips when this kernel cannot confine.
func confined(t *testing.T, c Config, ops ...string) map[string]string {
	t.Helper()
	if LandlockABI() < 1 {
		t.Skip("no Landlock on this kernel")
	}
	cmd := exec.Command(os.Args[0], append([]string{probeArg}, ops...)...)
	if err := c.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "xcsh sandbox:") || strings.Contains(err.Error(), "operation not permitted") {
			t.Skipf("cannot confine here: %v: %s", err, out)
		}
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		got[k] = v
	}
	return got
}

func expect(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
}

// fixture makes base/ws (a workspace with git's and the agents'
// configuration) and base/out (outside it) with a file f in each.
func fixture(t *testing.T) (ws, out string) {
	t.Helper()
	base := realTemp(t)
	ws, out = filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".xcsh", "extensions"), filepath.Join(ws, "src"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(ws, "f"), filepath.Join(out, "f"), filepath.Join(ws, ".git", "config"),
		filepath.Join(ws, ".git", "HEAD"), filepath.Join(ws, ".mcp.json")} {
		if err := os.WriteFile(f, []byte("keep\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws, out
}

// Read-only: nothing changes, metadata included (the seccomp filter),
// and io_uring, which the filter cannot see into, is refused.
func TestConfinedReadOnlyRefusesMetadata(t *testing.T) {
	t.Parallel()
	ws, out := fixture(t)
	p := &Policy{Mode: ReadOnly, Roots: []string{}, Devices: []string{"/dev/null"}}
	got := confined(t, Config{Policy: *p, Landlock: true, Seccomp: true},
		"chmod:"+out+"/f", "fchmod:"+out+"/f", "chown:"+out+"/f", "utime:"+out+"/f", "setxattr:"+out+"/f",
		"chattr:"+out+"/f", "iouring:-", "write:"+ws+"/new", "chmod:"+ws+"/f")
	expect(t, got, map[string]string{
		"chmod " + out + "/f": "EROFS", "fchmod " + out + "/f": "EROFS", "chown " + out + "/f": "EROFS",
		"utime " + out + "/f": "EROFS", "setxattr " + out + "/f": "EROFS", "chattr " + out + "/f": "EROFS",
		"iouring -": "EPERM", "write " + ws + "/new": "EACCES", "chmod " + ws + "/f": "EROFS",
	})
	if fi, err := os.Stat(filepath.Join(out, "f")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode changed: %v %v", fi.Mode(), err)
	}
}

// Workspace-write: metadata changes only inside the roots; the
// configuration paths are read-only and stay where they are; the rest of
// .git (the index) stays writable, so git works.
func TestConfinedWorkspaceWriteMounts(t *testing.T) {
	t.Parallel()
	ws, out := fixture(t)
	agent := filepath.Join(ws, "home", ".xcsh", "agent")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &Policy{Mode: WorkspaceWrite, Roots: []string{ws}, Devices: []string{"/dev/null"}}
	p.Protect(agent)
	got := confined(t, Config{Policy: *p, Landlock: true, NetNS: true, MountNS: true, Mounts: p.Mounts()},
		"chmod:"+out+"/f", "utime:"+out+"/f", "setxattr:"+out+"/f", "chmod:"+ws+"/f", "utime:"+ws+"/f",
		"append:"+ws+"/.git/config", "write:"+ws+"/.git/hooks/pre-commit", "write:"+ws+"/.git/index.lock",
		"rename:"+ws+"/.git:"+ws+"/git-moved", "append:"+ws+"/.mcp.json", "remove:"+ws+"/.mcp.json",
		"write:"+ws+"/.xcsh/extensions/evil", "rename:"+ws+"/.xcsh:"+ws+"/x", "write:"+agent+"/mcp.json",
		"rename:"+ws+"/home:"+ws+"/home2", "write:"+ws+"/src/new", "mkdir:"+ws+"/build", "write:/dev/null",
		"umount:"+ws+"/.git/hooks", "write:"+out+"/new")
	expect(t, got, map[string]string{
		"chmod " + out + "/f": "EROFS", "utime " + out + "/f": "EROFS", "setxattr " + out + "/f": "EROFS",
		"chmod " + ws + "/f": "ok", "utime " + ws + "/f": "ok",
		"append " + ws + "/.git/config": "EROFS", "write " + ws + "/.git/hooks/pre-commit": "EROFS",
		"write " + ws + "/.git/index.lock": "ok", "rename " + ws + "/.git": "EBUSY",
		"append " + ws + "/.mcp.json": "EROFS", "remove " + ws + "/.mcp.json": "EBUSY",
		"write " + ws + "/.xcsh/extensions/evil": "EROFS", "rename " + ws + "/.xcsh": "EBUSY",
		"write " + agent + "/mcp.json": "EROFS", "rename " + ws + "/home": "EBUSY",
		"write " + ws + "/src/new": "ok", "mkdir " + ws + "/build": "ok", "write /dev/null": "ok",
		"umount " + ws + "/.git/hooks": "EPERM", "write " + out + "/new": "EROFS",
	})
	if b, err := os.ReadFile(filepath.Join(ws, ".git", "config")); err != nil || string(b) != "keep\n" {
		t.Fatalf(".git/config: %q %v", b, err)
	}
}

func TestMetadataFilterShape(t *testing.T) {
	t.Parallel()
	tables := nativeTables()
	if tables == nil {
		t.Skip("no filter for this architecture")
	}
	prog := metadataFilter(tables)
	// Each architecture's test jumps over its block: one byte.
	for i, ins := range prog {
		if ins.Code == (unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K) && (i+1+int(ins.Jf) >= len(prog) || i+1+int(ins.Jt) >= len(prog)) {
			t.Fatalf("jump %d leaves the program", i)
		}
	}
	if last := prog[len(prog)-1]; last.Code != unix.BPF_RET|unix.BPF_K || last.K != unix.SECCOMP_RET_ALLOW {
		t.Fatalf("the program does not end by allowing: %+v", last)
	}
	if _, err := json.Marshal(Config{Seccomp: true}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkWrapStart is the cost of starting a process confined (the
// supervisor pays it once at start, a project's server or extension at
// each start): Landlock alone, with read-only's filter, and with
// workspace-write's mount namespace laid out over a workspace with a git
// repository, each beside the network namespace of the default (network
// off).
func BenchmarkWrapStart(b *testing.B) {
	if LandlockABI() < 1 {
		b.Skip("no Landlock on this kernel")
	}
	base, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	for _, d := range []string{ws + "/.git/hooks", ws + "/.xcsh"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(ws+"/.git/config", nil, 0o644); err != nil {
		b.Fatal(err)
	}
	ww := &Policy{Mode: WorkspaceWrite, Roots: []string{ws}, Devices: []string{"/dev/null"}}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"landlock", Config{Policy: *ww, Landlock: true}},
		{"landlock+seccomp", Config{Policy: Policy{Mode: ReadOnly, Devices: []string{"/dev/null"}}, Landlock: true, Seccomp: true}},
		{"landlock+netns", Config{Policy: *ww, Landlock: true, NetNS: true}},
		{"landlock+netns+mounts", Config{Policy: *ww, Landlock: true, NetNS: true, MountNS: true, Mounts: ww.Mounts()}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(os.Args[0], probeArg)
				if err := c.cfg.Wrap(cmd); err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Skipf("cannot confine here: %v: %s", err, out)
				}
			}
		})
	}
}
