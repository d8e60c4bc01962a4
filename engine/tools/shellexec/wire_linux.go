package shellexec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
)

// The agent and its supervisor talk over a Unix stream socket pair: each
// frame is a 4-byte big-endian length and a JSON message. A descriptor (a
// command's output pipe) travels as SCM_RIGHTS with the first byte of the
// frame that uses it. Linux never merges stream data carrying descriptors
// with data before it in one read, and delivers descriptors in order, so
// the receiver keeps them in a queue and a frame that announces one takes
// the oldest.

// maxFrame bounds one message: a command and its environment.
const maxFrame = 64 << 20

// Operations of the supervisor protocol.
const (
	opConfig   = "config"    // agent → supervisor, first: the sandbox to apply
	opStart    = "start"     // agent → supervisor, with the output pipe: start a command
	opAbort    = "abort"     // agent → supervisor: end a command's group (TERM, KILL after graceMs)
	opKillAll  = "killall"   // agent → supervisor: kill every command and every descendant
	opReady    = "ready"     // supervisor → agent: configured (info) or not (error)
	opStarted  = "started"   // supervisor → agent: the command runs (pid) or did not start (error)
	opExit     = "exit"      // supervisor → agent: the command's group is gone (status)
	opKilledAl = "killedall" // supervisor → agent: nothing is left after killall
)

// message is one frame of the protocol; each op uses some of the fields.
type message struct {
	Op      string          `json:"op"`
	ID      uint64          `json:"id,omitempty"`
	Path    string          `json:"path,omitempty"`
	Argv    []string        `json:"argv,omitempty"`
	Dir     string          `json:"dir,omitempty"`
	Env     []string        `json:"env,omitempty"`
	GraceMs int64           `json:"graceMs,omitempty"`
	Pid     int             `json:"pid,omitempty"`
	Status  int             `json:"status,omitempty"` // a syscall.WaitStatus
	Error   string          `json:"error,omitempty"`
	Config  json.RawMessage `json:"config,omitempty"`
	Info    json.RawMessage `json:"info,omitempty"`
	// HasFD says a descriptor travels with this frame.
	HasFD bool `json:"fd,omitempty"`
}

// wire is one end of the socket pair.
type wire struct {
	c   *net.UnixConn
	wmu sync.Mutex // one frame at a time
	// Read side, used by one goroutine only.
	buf []byte
	fds []int // received descriptors not yet claimed by a frame
}

func newWire(c *net.UnixConn) *wire { return &wire{c: c} }

// send writes m, with fd (when >= 0) attached to its first byte.
func (w *wire) send(m message, fd int) error {
	m.HasFD = fd >= 0
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	frame = append(frame, body...)
	w.wmu.Lock()
	defer w.wmu.Unlock()
	var oob []byte
	if fd >= 0 {
		oob = syscall.UnixRights(fd)
	}
	n, _, err := w.c.WriteMsgUnix(frame, oob, nil)
	if err != nil {
		return err
	}
	if n < len(frame) {
		_, err = w.c.Write(frame[n:])
	}
	return err
}

// recv reads the next frame; fd is the descriptor it carries, or -1. At
// the end of the stream it returns io.EOF.
func (w *wire) recv() (m message, fd int, err error) {
	for {
		if len(w.buf) >= 4 {
			n := binary.BigEndian.Uint32(w.buf)
			if n > maxFrame {
				return m, -1, fmt.Errorf("supervisor frame of %d bytes", n)
			}
			if len(w.buf) >= 4+int(n) {
				err = json.Unmarshal(w.buf[4:4+n], &m)
				w.buf = w.buf[4+n:]
				if err != nil {
					return m, -1, err
				}
				fd = -1
				if m.HasFD {
					if len(w.fds) == 0 {
						return m, -1, errors.New("supervisor frame without its descriptor")
					}
					fd, w.fds = w.fds[0], w.fds[1:]
				}
				return m, fd, nil
			}
		}
		chunk := make([]byte, 64<<10)
		oob := make([]byte, syscall.CmsgSpace(4*16))
		n, oobn, _, _, err := w.c.ReadMsgUnix(chunk, oob)
		if oobn > 0 {
			if cmsgs, perr := syscall.ParseSocketControlMessage(oob[:oobn]); perr == nil {
				for _, cm := range cmsgs {
					if fds, perr := syscall.ParseUnixRights(&cm); perr == nil {
						for _, fd := range fds {
							syscall.CloseOnExec(fd)
						}
						w.fds = append(w.fds, fds...)
					}
				}
			}
		}
		w.buf = append(w.buf, chunk[:n]...)
		if err != nil {
			if errors.Is(err, io.EOF) || n == 0 && oobn == 0 {
				return m, -1, io.EOF
			}
			return m, -1, err
		}
		if n == 0 && oobn == 0 {
			return m, -1, io.EOF
		}
	}
}

// close closes the socket and any descriptor nobody claimed.
func (w *wire) close() {
	w.c.Close()
	for _, fd := range w.fds {
		syscall.Close(fd)
	}
	w.fds = nil
}
