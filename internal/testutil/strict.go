package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// StrictEnv names the variable that turns a missing tool or corpus from a
// skip into a failure. CI sets it, so a green run proves every test ran; a
// developer without Chromium, node or the corpus leaves it unset.
const StrictEnv = "SSATD_STRICT"

// Strict reports whether SSATD_STRICT=1.
func Strict() bool { return os.Getenv(StrictEnv) == "1" }

// SkipOrFail skips the test, naming what is missing, or fails it when the
// run is strict.
func SkipOrFail(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if Strict() {
		tb.Fatalf(StrictEnv+"=1: "+format, args...)
	}
	tb.Skipf(format, args...)
}

// RequireTool returns the path of the first of names found in PATH; when
// none is, it skips the test (fails it under SSATD_STRICT=1).
func RequireTool(tb testing.TB, names ...string) string {
	tb.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	SkipOrFail(tb, "none of %s found in PATH; install it to run this test", strings.Join(names, ", "))
	return ""
}

// RequireCorpus returns the *.html pages of the folder named by
// SSATD_CORPUS, sorted by name. Unset, it skips the test (fails it under
// SSATD_STRICT=1); set to a folder without pages, it always fails.
func RequireCorpus(tb testing.TB) []string {
	tb.Helper()
	dir := os.Getenv("SSATD_CORPUS")
	if dir == "" {
		SkipOrFail(tb, "SSATD_CORPUS is not set: corpus tests need a folder of HTML pages")
		return nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("SSATD_CORPUS=%s holds no *.html pages (%v)", dir, err)
	}
	return files
}
