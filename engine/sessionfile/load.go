package sessionfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
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

// Load reads a session file. It is lenient, as the original is: a line
// that does not decode is skipped and reported in Warnings. A missing or
// unreadable file, or a first line that is not a session header, is an
// error wrapping ErrNotSession (and the os error, if any).
func Load(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotSession, err)
	}
	defer f.Close()
	s, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Path = path
	return s, nil
}

// read parses a session from r, line by line: memory is the entries, not
// the file. Decoding (nearly all the cost: encoding/json) runs on up to
// GOMAXPROCS goroutines over chunks of lines while this one reads; results
// are assembled in file order, so the outcome is the same as a serial
// read. A small file is decoded inline.
func read(r io.Reader) (*Session, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var long []byte // reused for lines longer than the reader's buffer
	line, err := readLine(br, &long)
	if len(line) == 0 && err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty file", ErrNotSession)
		}
		return nil, fmt.Errorf("%w: %w", ErrNotSession, err)
	}
	h, herr := DecodeHeader(trimEOL(line))
	if herr != nil {
		return nil, herr
	}
	s := &Session{Header: *h, size: int64(len(line))}
	if line[len(line)-1] == '\n' {
		s.good = s.size
	}
	if h.Version != Version {
		s.Warnings = append(s.Warnings, fmt.Sprintf("session version %d loaded as is (not migrated to %d)", h.Version, Version))
	}

	d := newDecoder()
	c := newChunk(2)
	lastN, lastTerminated := 0, true
	for n := 2; err == nil; n++ {
		line, err = readLine(br, &long)
		if err != nil && !errors.Is(err, io.EOF) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: read error, rest of file skipped: %v", n, err))
			break
		}
		if len(line) == 0 {
			break
		}
		s.size += int64(len(line))
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
	for _, c := range chunks {
		s.Entries = append(s.Entries, c.entries...)
		for _, le := range c.errs {
			if le.n == lastN && !lastTerminated {
				s.torn = true
				s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: torn last line (%d bytes, no newline) skipped: %v", le.n, le.size, le.err))
			} else {
				s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: skipped: %v", le.n, le.err))
			}
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
	c.entries = make([]*engine.Entry, 0, len(c.lines.ends))
	data, start := c.lines.data, 0
	for i, end := range c.lines.ends {
		line := data[start:end]
		start = end
		if len(bytes.TrimSpace(line)) == 0 {
			continue // the original's lenient parse skips blank lines
		}
		e, err := d.Decode(line)
		if err != nil {
			c.errs = append(c.errs, lineError{n: c.first + i, size: len(line), err: err})
			continue
		}
		c.entries = append(c.entries, e)
	}
	c.lines.release()
	c.lines = nil
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
// of the file it returns what is left and io.EOF.
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
