package rpc

import "github.com/xcsh-go/xcsh/engine"

// The commands that show the user's setup to the host: the slash commands
// a prompt can invoke, in pi's shape (get_commands) and omp's
// (get_available_commands), and the MCP servers with their tools.

// piCommand is one entry of pi's get_commands.
type piCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Source      string        `json:"source"`
	SourceInfo  *piSourceInfo `json:"sourceInfo,omitempty"`
}

// piSourceInfo is pi's SourceInfo; every file we list is top-level (no
// packages in this build).
type piSourceInfo struct {
	Path    string `json:"path"`
	Source  string `json:"source"`
	Scope   string `json:"scope"`
	Origin  string `json:"origin"`
	BaseDir string `json:"baseDir,omitempty"`
}

func (s *Server) cmdGetCommands(c *command) {
	cmds := s.sess.Commands()
	out := make([]piCommand, 0, len(cmds))
	for _, sc := range cmds {
		pc := piCommand{Name: sc.Name, Description: sc.Description, Source: sc.Source}
		if sc.Info.Path != "" {
			pc.SourceInfo = &piSourceInfo{Path: sc.Info.Path, Source: sc.Info.Source, Scope: sc.Info.Scope,
				Origin: "top-level", BaseDir: sc.Info.BaseDir}
		}
		out = append(out, pc)
	}
	s.okJSON(c, piCommandsData{out})
}

// ompCommand is one entry of omp's get_available_commands.
type ompCommand struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Input       *ompInput `json:"input,omitempty"`
	Source      string    `json:"source"`
}

type ompInput struct {
	Hint string `json:"hint"`
}

// cmdGetAvailableCommands answers in omp's shape: a template is a "file"
// command with its argument hint, skills and extension commands take
// "arguments". omp's built-in commands are not listed: none runs from a
// prompt in this build.
func (s *Server) cmdGetAvailableCommands(c *command) {
	cmds := s.sess.Commands()
	out := make([]ompCommand, 0, len(cmds))
	for _, sc := range cmds {
		oc := ompCommand{Name: sc.Name, Description: sc.Description, Source: sc.Source}
		switch sc.Source {
		case engine.CommandPrompt:
			oc.Source = "file"
			if sc.ArgumentHint != "" {
				oc.Input = &ompInput{Hint: sc.ArgumentHint}
			}
		case engine.CommandExtension:
			if oc.Description == "" {
				oc.Description = "(extension command)"
			}
			oc.Input = &ompInput{Hint: "arguments"}
		default:
			oc.Input = &ompInput{Hint: "arguments"}
		}
		out = append(out, oc)
	}
	s.okJSON(c, ompCommandsData{out})
}

// mcpServer is one entry of get_mcp_servers.
type mcpServer struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	Status    string   `json:"status"`
	Tools     []string `json:"tools"`
	Error     string   `json:"error,omitempty"`
}

// cmdGetMCPServers reports each configured MCP server, its status and the
// tools it offers (ours: no family member has it).
func (s *Server) cmdGetMCPServers(c *command) {
	servers := s.sess.ToolServers()
	out := make([]mcpServer, 0, len(servers))
	for _, st := range servers {
		tools := st.Tools
		if tools == nil {
			tools = []string{}
		}
		out = append(out, mcpServer{Name: st.Name, Transport: st.Transport, Status: st.Status, Tools: tools, Error: st.Error})
	}
	s.okJSON(c, mcpServersData{out})
}
