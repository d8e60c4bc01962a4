package resources

import (
	"fmt"
	"testing"
)

// BenchmarkLoadResources100: discovering and reading 50 skills and 50
// templates (the work a session does in the background at start).
func BenchmarkLoadResources100(b *testing.B) {
	files := map[string]string{}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf(".xcsh/skills/skill-%d/SKILL.md", i)] = fmt.Sprintf("---\nname: skill-%d\ndescription: Skill number %d, for benchmarks\n---\n\nDo thing %d carefully.\n", i, i, i)
		files[fmt.Sprintf(".xcsh/prompts/tmpl-%d.md", i)] = fmt.Sprintf("---\ndescription: Template %d\nargument-hint: <what>\n---\nReview $1 for case %d.\n", i, i)
	}
	dir := tree(b, files)
	for b.Loop() {
		res := Load(Options{Cwd: dir, Home: dir, AgentDir: dir + "/agent"})
		if n := len(res.Commands.Commands()); n != 100 {
			b.Fatalf("%d commands", n)
		}
	}
}
