package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records how a helper ended instead of
// ending the calling test.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(string, ...any) {
	r.skipped = true
	panic(r)
}
func (r *recorder) Fatalf(string, ...any) {
	r.failed = true
	panic(r)
}

// run calls f with a recorder and reports whether it skipped or failed.
func run(t *testing.T, f func(tb testing.TB)) (skipped, failed bool) {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		f(r)
	}()
	return r.skipped, r.failed
}

func TestStrictTurnsSkipsIntoFailures(t *testing.T) {
	corpus := t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "a.html"), []byte("<p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, strict, corpus string
		f                    func(tb testing.TB)
		skip, fail           bool
	}{
		{"missing tool", "", "", func(tb testing.TB) { RequireTool(tb, "ssatd-no-such-tool") }, true, false},
		{"missing tool, strict", "1", "", func(tb testing.TB) { RequireTool(tb, "ssatd-no-such-tool") }, false, true},
		{"missing corpus", "", "", func(tb testing.TB) { RequireCorpus(tb) }, true, false},
		{"missing corpus, strict", "1", "", func(tb testing.TB) { RequireCorpus(tb) }, false, true},
		{"strict other than 1 is not strict", "yes", "", func(tb testing.TB) { RequireCorpus(tb) }, true, false},
		{"empty corpus folder", "", t.TempDir(), func(tb testing.TB) { RequireCorpus(tb) }, false, true},
		{"corpus present, strict", "1", corpus, func(tb testing.TB) {
			if got := RequireCorpus(tb); len(got) != 1 {
				tb.Fatalf("pages %v", got)
			}
		}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(StrictEnv, tt.strict)
			t.Setenv("SSATD_CORPUS", tt.corpus)
			skipped, failed := run(t, tt.f)
			if skipped != tt.skip || failed != tt.fail {
				t.Errorf("skipped %v failed %v, want %v %v", skipped, failed, tt.skip, tt.fail)
			}
		})
	}
}

func TestRequireToolFindsATool(t *testing.T) {
	t.Setenv(StrictEnv, "1")
	if p := RequireTool(t, "ssatd-no-such-tool", "go"); filepath.Base(p) != "go" {
		t.Errorf("RequireTool = %q, want the go binary", p)
	}
}
