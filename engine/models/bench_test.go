package models

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

// manyCases are the shapes of a large configuration, each under the cap:
// 40,000 models in one provider (2.8 MB), and 15,000 providers of one
// model each (3.2 MB).
var manyCases = []struct{ n, per int }{{40_000, 40_000}, {15_000, 1}}

// BenchmarkLoadManyModels: thousands of custom models load in linear time
// (the quadratic upsert took 33 s for 40,000), in one provider and one
// provider each.
func BenchmarkLoadManyModels(b *testing.B) {
	for _, c := range manyCases {
		b.Run(fmt.Sprintf("%dper%d", c.n, c.per), func(b *testing.B) {
			dir := b.TempDir()
			body := manyModels(c.n, c.per)
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
				if n := len(r.All()); n < c.n {
					b.Fatalf("%d models", n)
				}
			}
		})
	}
}

// The large shapes load whole and right.
func TestLoadManyModels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 3 MB configurations")
	}
	for _, c := range manyCases {
		dir := agentDir(t, map[string]string{"models.json": manyModels(c.n, c.per)})
		r, err := Load(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		last := c.n - 1
		if m, ok := r.Find(fmt.Sprintf("p%d", last/c.per), fmt.Sprintf("model-%d", last)); !ok || m.ContextWindow != 8192+last {
			t.Errorf("%d per %d: last model %+v %v", c.n, c.per, m, ok)
		}
	}
}

// loadAlloc is how many bytes loading a file of n models allocates.
func loadAlloc(t *testing.T, name string, n, per int) (alloc, size uint64) {
	t.Helper()
	body := manyModels(n, per)
	dir := agentDir(t, map[string]string{name: body})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Load(dir, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, uint64(len(body))
}

// Loading is linear in the file and its memory bounded by the cap: twice
// the models allocate twice the bytes (a quadratic step would show as
// four times), and the bytes allocated per byte of file stay under a
// bound, so a file at the cap costs at most that times the cap. It counts
// bytes, not time. (Not parallel: nothing else allocates meanwhile.)
func TestLoadAllocationLinear(t *testing.T) {
	for _, c := range []struct {
		name    string
		perByte float64
	}{{"models.json", 40}, {"models.yml", 90}} {
		for _, per := range []int{4000, 1} {
			a1, s1 := loadAlloc(t, c.name, 2000, per)
			a2, s2 := loadAlloc(t, c.name, 4000, per)
			// The fixed part (the catalog) is taken out with the difference.
			ratio := float64(a2-a1) / float64(a1-fixedAlloc(t, c.name))
			if ratio < 0.8 || ratio > 1.25 {
				t.Errorf("%s per %d: 2,000 more models allocated %.2f times what the first 2,000 did", c.name, per, ratio)
			}
			if pb := float64(a2-a1) / float64(s2-s1); pb > c.perByte {
				t.Errorf("%s per %d: %.1f bytes allocated per byte of file, over %v", c.name, per, pb, c.perByte)
			}
		}
	}
}

// fixedAlloc is what loading allocates with no custom model.
func fixedAlloc(t *testing.T, name string) uint64 {
	a, _ := loadAlloc(t, name, 0, 1)
	return a
}

// A file over the cap is refused at once, saying why and what to do.
func TestLoadRefusesOverCap(t *testing.T) {
	t.Parallel()
	big := `{"providers":{}}` + strings.Repeat(" ", maxConfigBytes)
	dir := agentDir(t, map[string]string{"models.json": big})
	_, err := Load(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "models.json: the file is 4.0 MiB, over the 4.0 MiB limit (a models file is read whole") ||
		!strings.HasSuffix(err.Error(), "keep the providers and models you use") {
		t.Fatalf("Load = %v", err)
	}
}
