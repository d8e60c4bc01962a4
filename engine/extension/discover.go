package extension

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/project"
)

// ManifestName is the file that makes a directory an extension.
const ManifestName = "extension.json"

// Manifest is a directory extension's extension.json: the command that
// runs it (a first element or argument starting with "./" or "../" is
// relative to the directory) and, optionally, its hook deadline in
// milliseconds.
type Manifest struct {
	Name    string   `json:"name"`
	Command []string `json:"command"`
	Timeout int64    `json:"timeout"`
}

// Where says where to look for extensions.
type Where struct {
	Cwd, AgentDir string
	// Paths are the --extension arguments, in order; they load even with
	// NoDiscovery.
	Paths []string
	// NoDiscovery (--no-extensions) skips the directories and the
	// settings lists.
	NoDiscovery bool
}

// Discover lists the extensions to run, in load order, first occurrence
// of a path wins: the --extension paths; the "extensions" lists of
// <agentDir>/settings.json and of .xcsh/settings.json in the project's
// folders (paths relative to the file's directory; an entry is a path or
// {"path", "timeout"}); then every entry of .xcsh/extensions/ in the
// project's folders and of <agentDir>/extensions/, by name. The project's
// folders are the working directory and each parent up to the project
// root, nearest first (engine/project), so an extension of the project
// guards a session started in any of its subfolders. An entry is an
// executable file or a directory holding extension.json; other files in
// those directories are skipped (hidden ones silently). What cannot be
// used is returned as a problem, for extension_error.
//
// Those the project brings (the settings lists and extensions directories
// of its folders, unless the agent dir lies there) are marked Project: a
// sandbox does not run them as the user unasked.
func Discover(w Where) ([]Spec, []engine.ExtensionError) {
	d := &discovery{seen: map[string]bool{}}
	for _, p := range w.Paths {
		d.add(absolute(w.Cwd, p), 0, true)
	}
	if !w.NoDiscovery {
		agentDir := filepath.Clean(w.AgentDir)
		fromProject := func(path string) bool { return w.AgentDir == "" || !within(path, agentDir) }
		type source struct {
			path    string
			project bool
		}
		var settings, extDirs []source
		if w.AgentDir != "" {
			settings = append(settings, source{filepath.Join(w.AgentDir, "settings.json"), false})
		}
		for _, p := range project.Dirs(w.Cwd) {
			f, e := filepath.Join(p, ".xcsh", "settings.json"), filepath.Join(p, ".xcsh", "extensions")
			settings = append(settings, source{f, fromProject(f)})
			extDirs = append(extDirs, source{e, fromProject(e)})
		}
		if w.AgentDir != "" {
			extDirs = append(extDirs, source{filepath.Join(w.AgentDir, "extensions"), false})
		}
		for _, src := range settings {
			d.project = src.project
			d.settings(src.path)
		}
		for _, src := range extDirs {
			d.project = src.project
			dir := src.path
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			names := make([]string, 0, len(entries))
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), ".") {
					names = append(names, e.Name())
				}
			}
			sort.Strings(names)
			for _, n := range names {
				d.add(filepath.Join(dir, n), 0, false)
			}
		}
	}
	return d.specs, d.problems
}

type discovery struct {
	seen     map[string]bool
	specs    []Spec
	problems []engine.ExtensionError
	// project marks what is added now as the project's.
	project bool
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return dir != "" && dir != "." && (p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)))
}

func absolute(base, p string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

func (d *discovery) problem(path string, err error) {
	d.problems = append(d.problems, engine.ExtensionError{ExtensionPath: path, Event: "load", Error: err.Error()})
}

// add makes a spec of path; explicit paths (named by the user) that are
// not extensions are problems, files in a scanned directory are skipped.
func (d *discovery) add(path string, deadline time.Duration, explicit bool) {
	if d.seen[path] {
		return
	}
	d.seen[path] = true
	fi, err := os.Stat(path)
	if err != nil {
		d.problem(path, err)
		return
	}
	switch {
	case fi.IsDir():
		spec, err := manifestSpec(path)
		if err != nil {
			d.problem(path, err)
			return
		}
		if deadline > 0 {
			spec.Deadline = deadline
		}
		spec.Project = d.project
		d.specs = append(d.specs, spec)
	case !fi.Mode().IsRegular():
		d.problem(path, errors.New("not a regular file or a directory"))
	case fi.Mode()&0o111 == 0:
		if explicit {
			d.problem(path, errors.New("not executable (an extension is an executable, or a directory with "+ManifestName+")"))
		}
	default:
		d.specs = append(d.specs, Spec{Path: path, Command: []string{path}, Deadline: deadline, Project: d.project})
	}
}

// manifestSpec reads a directory's extension.json.
func manifestSpec(dir string) (Spec, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return Spec{}, fmt.Errorf("a directory extension needs %s: %w", ManifestName, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Spec{}, fmt.Errorf("%s: %v", ManifestName, err)
	}
	if len(m.Command) == 0 || m.Command[0] == "" {
		return Spec{}, fmt.Errorf(`%s: "command" must name a program`, ManifestName)
	}
	cmd := make([]string, len(m.Command))
	for i, a := range m.Command {
		if strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
			a = filepath.Join(dir, a)
		}
		cmd[i] = a
	}
	return Spec{Path: dir, Command: cmd, Deadline: millis(m.Timeout)}, nil
}

// settings adds the extensions a settings file lists.
func (d *discovery) settings(file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		return
	}
	var s struct {
		Extensions []json.RawMessage `json:"extensions"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		d.problem(file, fmt.Errorf("settings: %v", err))
		return
	}
	base := filepath.Dir(file)
	for _, raw := range s.Extensions {
		var path string
		var timeout int64
		if err := json.Unmarshal(raw, &path); err != nil {
			var e struct {
				Path    string `json:"path"`
				Timeout int64  `json:"timeout"`
			}
			if err := json.Unmarshal(raw, &e); err != nil || e.Path == "" {
				d.problem(file, fmt.Errorf("settings: an extensions entry is a path or {\"path\", \"timeout\"}: %s", raw))
				continue
			}
			path, timeout = e.Path, e.Timeout
		}
		d.add(absolute(base, path), millis(timeout), true)
	}
}

// millis is a timeout in milliseconds as a duration: 0 for none (or a
// negative one), and never past what a Duration holds (the host caps it
// at MaxDeadline and says so).
func millis(ms int64) time.Duration {
	if ms <= 0 {
		return 0
	}
	return time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
}
