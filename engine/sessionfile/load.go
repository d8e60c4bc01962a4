package sessionfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/safefile"
)

// Session is a session file as read by Load.
type Session struct {
	Path    string
	Header  Header
	Entries []*engine.Entry // file order
	// Leaf is the id of the last entry in file order ("" when none): where
	// the original resumes.
	Leaf string
	// Warnings name the lines that were skipped (a torn last line, a line
	// that does not decode) and anything loaded as is (an old version); the
	// caller prints them to stderr.
	Warnings []string

	size int64 // bytes read
	good int64 // offset just past the last newline
	torn bool  // the bytes after good are a partial line that did not decode
}

// MaxLineBytes caps one line of a session file. A longer line is skipped
// and reported in Warnings, read through without being held, so neither a
// file with no newline nor a link to /dev/zero can exhaust memory. It is
// twice the RPC input cap: an entry holds at most what one command line
// brought (a prompt with its images) plus its envelope.
const MaxLineBytes = 128 << 20

// Load reads a session file. It is lenient, as the original is: a line
// that does not decode, or that is over MaxLineBytes, is skipped and
// reported in Warnings, never fatal. A missing or unreadable file, a path
// the file rule refuses (a FIFO, a device, a directory, the agent's own
// standard streams: see engine/safefile), or a first line that is not a
// session header, is an error wrapping ErrNotSession (and the os error or
// refusal, if any).
func Load(path string) (*Session, error) {
	f, _, err := safefile.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()
	s, err := read(f, MaxLineBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Path = path
	return s, nil
}

// openError is the error of a session file that cannot be opened: a
// refusal reads "<path>: <reason>"; an os error keeps its own text.
func openError(path string, err error) error {
	var r *safefile.Refusal
	if errors.As(err, &r) {
		return &refusedError{path, err}
	}
	return fmt.Errorf("%w: %w", ErrNotSession, err)
}

// refusedError is a session path the file rule refuses.
type refusedError struct {
	path string
	err  error
}

func (e *refusedError) Error() string   { return e.path + ": " + e.err.Error() }
func (e *refusedError) Unwrap() []error { return []error{ErrNotSession, e.err} }

// read parses a session from r, line by line: memory is the entries, not
// the file. Decoding (nearly all the cost) runs on up to GOMAXPROCS
// goroutines over chunks of lines while this one reads; results are
// assembled in file order, so the outcome is the same as a serial read.
// A small file is decoded inline. A line over maxLine bytes is skipped.
func read(r io.Reader, maxLine int) (*Session, error) {
	// The header is read with listing's cap (headerLimit): a file that
	// does not start with one is refused after that much, not read
	// through. The line reader then takes over the same buffer.
	br := bufio.NewReaderSize(r, 256<<10)
	line, err := headLine(br)
	if err != nil {
		return nil, err
	}
	h, herr := DecodeHeader(trimEOL(line))
	if herr != nil {
		return nil, herr
	}
	head := int64(len(line))
	s := &Session{Header: *h, size: head}
	if line[len(line)-1] == '\n' {
		s.good = s.size
	}
	lr := safefile.NewLineReader(br, 256<<10, maxLine)
	if f, ok := r.(*os.File); ok {
		// Long lines are measured first: one over the cap is skipped
		// without being copied, one under it read at its exact size.
		lr.MeasureWith(f, head)
	}
	var long *safefile.LineTooLongError
	if h.Version != Version {
		s.Warnings = append(s.Warnings, fmt.Sprintf("session version %d loaded as is (not migrated to %d)", h.Version, Version))
	}

	d := newDecoder()
	c := newChunk(2)
	var skipped []lineError // lines over the cap
	lastN, lastTerminated := 0, true
	for n := 2; ; n++ {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.As(err, &long) {
			s.size = head + lr.Offset()
			lastN, lastTerminated = n, long.Terminated
			if lastTerminated {
				s.good = s.size
			}
			skipped = append(skipped, lineError{n: n, size: int(long.Size), err: err})
			continue
		}
		if err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: read error, rest of file skipped: %v", n, err))
			break
		}
		s.size = head + lr.Offset()
		lastN, lastTerminated = n, line[len(line)-1] == '\n'
		if lastTerminated {
			s.good = s.size
		}
		c.add(trimEOL(line))
		if c.full() {
			d.submit(c)
			c = newChunk(n + 1)
		}
	}
	d.submit(c)
	chunks := d.wait()
	total := 0
	for _, c := range chunks {
		total += len(c.entries)
	}
	s.Entries = make([]*engine.Entry, 0, total)
	var errs []lineError
	for _, c := range chunks {
		s.Entries = append(s.Entries, c.entries...)
		errs = append(errs, c.errs...)
	}
	if len(skipped) > 0 {
		errs = append(errs, skipped...)
		slices.SortFunc(errs, func(a, b lineError) int { return a.n - b.n })
	}
	for _, le := range errs {
		var long *safefile.LineTooLongError
		switch {
		case errors.As(le.err, &long):
			s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: skipped: %v", le.n, le.err))
		case le.n == lastN && !lastTerminated:
			s.torn = true
			s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: torn last line (%d bytes, no newline) skipped: %v", le.n, le.size, le.err))
		default:
			s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: skipped: %v", le.n, le.err))
		}
	}
	if k := len(s.Entries); k > 0 {
		s.Leaf = s.Entries[k-1].ID
	}
	return s, nil
}

// chunk is a run of consecutive lines decoded together.
type chunk struct {
	first   int      // line number of the first line
	lines   *lineBuf // nil once decoded
	entries []*engine.Entry
	errs    []lineError
}

// lineBuf holds a chunk's lines, without newlines, back to back; ends
// says where each one ends.
type lineBuf struct {
	data []byte
	ends []int
}

// lineBufs recycles the chunks' line buffers. Only the chunks in flight
// hold one (the reader runs at most a queue ahead of the workers), so a
// 100k-entry file reuses a handful of buffers instead of allocating one
// per chunk: the file's size again in garbage, which made the collector
// run (and the heap grow) during the load.
var lineBufs = sync.Pool{New: func() any {
	return &lineBuf{data: make([]byte, 0, 256<<10), ends: make([]int, 0, chunkLines)}
}}

func (b *lineBuf) release() {
	if cap(b.data) > 2*chunkBytes {
		return // grown for a huge line: let it go
	}
	b.data, b.ends = b.data[:0], b.ends[:0]
	lineBufs.Put(b)
}

type lineError struct {
	n, size int
	err     error
}

// Chunks are large enough that handing one to a goroutine costs little
// against decoding it.
const (
	chunkLines = 512
	chunkBytes = 1 << 20
)

func newChunk(first int) *chunk {
	return &chunk{first: first, lines: lineBufs.Get().(*lineBuf)}
}

func (c *chunk) add(line []byte) {
	c.lines.data = append(c.lines.data, line...)
	c.lines.ends = append(c.lines.ends, len(c.lines.data))
}

func (c *chunk) len() int { return len(c.lines.ends) }

func (c *chunk) full() bool {
	return len(c.lines.ends) >= chunkLines || len(c.lines.data) >= chunkBytes
}

// decode decodes the lines and releases their buffer: the entries do not
// refer to it (every string and raw value is copied out).
func (c *chunk) decode() {
	var d engine.EntryDecoder
	var scratch []byte
	c.entries = make([]*engine.Entry, 0, len(c.lines.ends))
	data, start := c.lines.data, 0
	for i, end := range c.lines.ends {
		line := data[start:end]
		start = end
		if len(bytes.TrimSpace(line)) == 0 {
			continue // the original's lenient parse skips blank lines
		}
		e, err := decodeLine(&d, line, &scratch)
		if err != nil {
			c.errs = append(c.errs, lineError{n: c.first + i, size: len(line), err: err})
			continue
		}
		c.entries = append(c.entries, e)
	}
	c.lines.release()
	c.lines = nil
}

// fastPrefix starts the lines the engine's fast decoder reads: message
// entries as the original (and this package) writes them.
var fastPrefix = []byte(`{"type":"message",`)

// decodeLine decodes one line. A line written with spaces between its
// tokens (by another tool: Python's json.dumps puts ", " and ": ") misses
// the fast decoder, and encoding/json reads it at a tenth of the speed;
// such a line is compacted first, which changes no value. When the
// compacted line does not decode, the original is decoded for the error,
// so a warning quotes the line as it is.
func decodeLine(d *engine.EntryDecoder, line []byte, scratch *[]byte) (*engine.Entry, error) {
	if !bytes.HasPrefix(line, fastPrefix) {
		if c, ok := compactJSON((*scratch)[:0], line); ok {
			*scratch = c
			if e, err := d.Decode(c); err == nil {
				return e, nil
			}
		}
	}
	return d.Decode(line)
}

// compactJSON appends src to dst without the whitespace that touches a
// structural character ({ } [ ] , :) outside strings, and reports whether
// it dropped any. Whitespace is insignificant exactly there, so a valid
// line keeps its value and an invalid one stays invalid: whitespace
// between two other tokens ("1 2", "true false") is kept.
func compactJSON(dst, src []byte) ([]byte, bool) {
	changed := false
	for i := 0; i < len(src); {
		c := src[i]
		switch c {
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end
			continue
		case ' ', '\t', '\n', '\r':
			j := i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
				j++
			}
			if (len(dst) > 0 && structural(dst[len(dst)-1])) || (j < len(src) && structural(src[j])) || len(dst) == 0 || j == len(src) {
				changed = true
			} else {
				dst = append(dst, src[i:j]...)
			}
			i = j
			continue
		}
		dst = append(dst, c)
		i++
	}
	return dst, changed
}

func structural(c byte) bool {
	switch c {
	case '{', '}', '[', ']', ',', ':':
		return true
	}
	return false
}

// decoder decodes chunks, in parallel once a file is more than one chunk.
type decoder struct {
	chunks  []*chunk // in file order; owned by the reading goroutine
	jobs    chan *chunk
	wg      sync.WaitGroup
	workers int
}

func newDecoder() *decoder {
	return &decoder{workers: min(runtime.GOMAXPROCS(0), 8)}
}

// submit queues c. With one CPU it is decoded at once, so its bytes go
// before the next chunk is read. Otherwise the first chunk is held back: a
// file that fits in one chunk is decoded by wait, with no goroutine. The
// queue holds as many chunks as there are workers, so reading never runs
// far ahead of decoding.
func (d *decoder) submit(c *chunk) {
	if c.len() == 0 {
		c.lines.release()
		return
	}
	d.chunks = append(d.chunks, c)
	if d.workers < 2 {
		c.decode()
		return
	}
	if len(d.chunks) == 1 {
		return
	}
	if d.jobs == nil {
		d.jobs = make(chan *chunk, d.workers)
		for range d.workers {
			d.wg.Go(func() {
				for c := range d.jobs {
					c.decode()
				}
			})
		}
		d.jobs <- d.chunks[0]
	}
	d.jobs <- c
}

// wait decodes what was not handed out, waits for the workers and returns
// the chunks in file order.
func (d *decoder) wait() []*chunk {
	if d.jobs == nil {
		if d.workers >= 2 && len(d.chunks) == 1 {
			d.chunks[0].decode()
		}
		return d.chunks
	}
	close(d.jobs)
	d.wg.Wait()
	return d.chunks
}

// readLine returns the next line including its newline (none at the end
// of the file). The result is valid until the next call: it is the
// reader's buffer, or *long for a line longer than the buffer. At the end
// of the file it returns what is left and io.EOF. It has no cap: only the
// store uses it, to skip the header of the file it wrote itself; every
// file read from outside goes through a capped reader.
func readLine(r *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	var scratch []byte
	if long != nil {
		scratch = (*long)[:0]
	}
	scratch = append(scratch, line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = r.ReadSlice('\n')
		scratch = append(scratch, line...)
	}
	if long != nil {
		*long = scratch
	}
	return scratch, err
}

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}
