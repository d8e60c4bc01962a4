package sessionfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine/safefile"
)

// Info describes a session file for listing and resuming.
type Info struct {
	Path          string
	ID            string
	Cwd           string
	Title         string
	ParentSession string
	Created       int64     // header timestamp, Unix milliseconds
	Modified      time.Time // file modification time
	// FirstMessage is the text of the first user message, when it lies
	// within the first listPrefix bytes of the file ("" otherwise).
	FirstMessage string
}

// listPrefix bounds what List reads of each file: the header and the
// first few entries. The original reads 4 KiB; a first prompt with a
// pasted file needs more.
const listPrefix = 64 << 10

// List describes the session files of dir (not its sub-directories),
// newest first. Files that are not sessions are left out; a missing dir
// has no sessions. Only the head of each file is read, so listing many
// large sessions stays fast.
func List(dir string) ([]Info, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []Info
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		if info, err := ReadInfo(filepath.Join(dir, de.Name())); err == nil {
			out = append(out, info)
		}
	}
	sortNewest(out)
	return out, nil
}

func sortNewest(infos []Info) {
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].Modified.After(infos[j].Modified) })
}

// ReadInfo describes one session file, reading only its head. A path the
// file rule refuses (see engine/safefile) is an error, like a file that
// does not start with a session header.
func ReadInfo(path string) (Info, error) {
	f, fi, err := safefile.Open(path)
	if err != nil {
		return Info{}, openError(path, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, listPrefix)
	line, err := headLine(br)
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", path, err)
	}
	h, err := DecodeHeader(trimEOL(line))
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", path, err)
	}
	info := Info{Path: path, ID: h.ID, Cwd: h.Cwd, Title: h.Title, ParentSession: h.ParentSession,
		Created: h.Timestamp, Modified: fi.ModTime()}
	// Look for the first user message in what one buffer holds: a line
	// longer than that (a big tool output) ends the search without being
	// read.
	for budget := listPrefix - len(line); budget > 0; {
		line, err := br.ReadSlice('\n')
		if err != nil || len(line) > budget {
			break
		}
		budget -= len(line)
		if text, ok := userText(line); ok {
			info.FirstMessage = text
			break
		}
	}
	return info, nil
}

// userText returns the first text of a user message entry.
func userText(line []byte) (string, bool) {
	if !bytes.Contains(line, []byte(`"user"`)) {
		return "", false // not a user message: skip the decode
	}
	var e struct {
		Type    string `json:"type"`
		Message struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "message" || e.Message.Role != "user" {
		return "", false
	}
	var s string
	if json.Unmarshal(e.Message.Content, &s) == nil {
		return s, true
	}
	var blocks []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(e.Message.Content, &blocks) == nil {
		for _, b := range blocks {
			if b.Text != nil {
				return *b.Text, true
			}
		}
	}
	return "", false
}

// Latest returns the most recently modified session file of dir (for
// --continue), or ErrNoSession. Files are tried newest first until one
// has a valid header; skipped, when not nil, is told of each newer file
// passed over and why (not a session, refused by the file rule).
func Latest(dir string, skipped func(path string, err error)) (string, error) {
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("find latest session: %w", err)
	}
	type cand struct {
		path string
		mod  time.Time
	}
	var cands []cand
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		if fi, err := de.Info(); err == nil {
			cands = append(cands, cand{filepath.Join(dir, de.Name()), fi.ModTime()})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].mod.After(cands[j].mod) })
	for _, c := range cands {
		err := checkHeader(c.path)
		if err == nil {
			return c.path, nil
		}
		if skipped != nil {
			skipped(c.path, err)
		}
	}
	return "", fmt.Errorf("%w in %s", ErrNoSession, dir)
}

// headerLimit caps the first line where only the head of a file is read
// (listing, --continue): a longer first line is not taken for a header,
// and a file with no newline at all costs at most this much.
const headerLimit = 1 << 20

// headLine reads the first line of a file, at most headerLimit bytes.
func headLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		switch {
		case len(line) > 0:
			return line, nil
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%w: empty file", ErrNotSession)
		}
		return nil, fmt.Errorf("%w: %w", ErrNotSession, err)
	}
	buf := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(buf) > headerLimit {
			return nil, fmt.Errorf("%w: first line is over %d bytes", ErrNotSession, headerLimit)
		}
		line, err = br.ReadSlice('\n')
		buf = append(buf, line...)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %w", ErrNotSession, err)
	}
	return buf, nil
}

// checkHeader is nil when path starts with a session header, else why not.
func checkHeader(path string) error {
	f, _, err := safefile.Open(path)
	if err != nil {
		return openError(path, err)
	}
	defer f.Close()
	line, err := headLine(bufio.NewReaderSize(f, 16<<10))
	if err == nil {
		_, err = DecodeHeader(trimEOL(line))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// FindByID finds the session a --resume argument names: a prefix
// (case-insensitive) of the session id, of the file name, or of the id
// part of the file name. dirs are searched in order, each with its
// sub-directories (pass a cwd's sessions dir, then <agentDir>/sessions,
// for the original's local-then-global search); within a dir the most
// recently modified match wins. File names are matched first; headers
// are read only when no name matches.
func FindByID(prefix string, dirs ...string) (Info, error) {
	p := strings.ToLower(strings.TrimSpace(prefix))
	if p == "" {
		return Info{}, fmt.Errorf("%w: empty id", ErrNoSession)
	}
	for _, dir := range dirs {
		var files []string
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
				files = append(files, path)
			}
			return nil
		})
		var byName, byHeader []Info
		for _, f := range files {
			if nameMatches(f, p) {
				if info, err := ReadInfo(f); err == nil {
					byName = append(byName, info)
				}
			}
		}
		if len(byName) == 0 {
			for _, f := range files {
				if info, err := ReadInfo(f); err == nil && strings.HasPrefix(strings.ToLower(info.ID), p) {
					byHeader = append(byHeader, info)
				}
			}
		}
		for _, found := range [][]Info{byName, byHeader} {
			if len(found) > 0 {
				sortNewest(found)
				return found[0], nil
			}
		}
	}
	return Info{}, fmt.Errorf("%w: %q", ErrNoSession, prefix)
}

// nameMatches: p is a prefix of the file name or of its id part
// (<timestamp>_<id>.jsonl).
func nameMatches(path, p string) bool {
	name := strings.ToLower(strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	if strings.HasPrefix(name, p) {
		return true
	}
	i := strings.LastIndexByte(name, '_')
	return i >= 0 && strings.HasPrefix(name[i+1:], p)
}
