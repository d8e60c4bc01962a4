package models

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manyModels is a models.json (or models.yml, which reads JSON too) with n
// custom models spread over providers of per models each, and an override
// for each model of the catalog's openai provider.
func manyModels(n, per int) string {
	var b strings.Builder
	b.WriteString(`{"providers":{`)
	for p := 0; p*per < n; p++ {
		if p > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"baseUrl":"http://127.0.0.1:%d/v1","api":"openai-completions","auth":"none","models":[`, p, 1000+p%1000)
		for i := p * per; i < min(n, (p+1)*per); i++ {
			if i > p*per {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"model-%d","contextWindow":%d,"cost":{"input":1,"output":2}}`, i, 8192+i)
		}
		b.WriteString(`],"modelOverrides":{"gpt-5":{"name":"G"}}}`)
	}
	b.WriteString(`}}`)
	return b.String()
}

// BenchmarkLoad40kModels: 40,000 custom models load in linear time (the
// quadratic upsert took 33 s here): in one provider, and one provider
// each.
func BenchmarkLoad40kModels(b *testing.B) {
	for _, per := range []int{40_000, 1} {
		b.Run(fmt.Sprintf("per%d", per), func(b *testing.B) {
			dir := b.TempDir()
			body := manyModels(40_000, per)
			if err := os.WriteFile(filepath.Join(dir, "models.json"), []byte(body), 0o600); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := Load(dir, nil)
				if err != nil {
					b.Fatal(err)
				}
				if n := len(r.All()); n < 40_000 {
					b.Fatalf("%d models", n)
				}
			}
		})
	}
}

// Loading 40,000 models must stay far below a second; a generous bound
// that only a quadratic step can miss.
func TestLoadManyModelsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 3 MB configuration")
	}
	for _, per := range []int{40_000, 1} {
		dir := agentDir(t, map[string]string{"models.json": manyModels(40_000, per)})
		r, err := Load(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := r.Find(fmt.Sprintf("p%d", 39_999/per), "model-39999"); !ok || m.ContextWindow != 8192+39_999 {
			t.Errorf("per %d: last model %+v %v", per, m, ok)
		}
	}
}
