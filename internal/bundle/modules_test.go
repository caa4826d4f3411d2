package bundle

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeModules(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestUnifiedBundleAsUpstreamConcatenates: core first, then the ids in
// the order given, joined with ";\n", the hash the hex SHA-256 of the
// body (crates/trusted-server-js/src/bundle.rs).
func TestUnifiedBundleAsUpstreamConcatenates(t *testing.T) {
	dir := writeModules(t, map[string]string{
		"tsjs-core.min.js":     "C",
		"tsjs-creative.min.js": "R",
		"tsjs-gpt.js":          "G",
		"tsjs-prebid.js":       "P-full",
		"tsjs-prebid.min.js":   "P",
		"README.md":            "not a module",
		"tsjs-Bad.js":          "upper case is no module id",
	})
	m, err := LoadModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ids  []string
		want string
	}{
		{nil, "C"},
		{[]string{"core"}, "C"},
		{[]string{"creative"}, "C;\nR"},
		{[]string{"creative", "prebid", "gpt"}, "C;\nR;\nP;\nG"},
		{[]string{"gpt", "creative"}, "C;\nG;\nR"},
		{[]string{"creative", "missing", "creative"}, "C;\nR"},
	}
	for _, tt := range tests {
		body, hash := m.Unified(tt.ids)
		if string(body) != tt.want {
			t.Errorf("%q: body %q, want %q", tt.ids, body, tt.want)
		}
		if want := fmt.Sprintf("%x", sha256.Sum256([]byte(tt.want))); hash != want {
			t.Errorf("%q: hash %s, want %s", tt.ids, hash, want)
		}
	}
	if m.Has("Bad") || m.Has("bad") {
		t.Error("a file outside the naming rule was read as a module")
	}
	if b, h, ok := m.Module("prebid"); !ok || string(b) != "P" || h != fmt.Sprintf("%x", sha256.Sum256([]byte("P"))) {
		t.Errorf("prebid module %q %s %v: the .min.js file is taken", b, h, ok)
	}
}

// TestModuleIDsFollowUpstreamRegistrationOrder: creative, then enabled
// integrations that have a module, in upstream's builder order whatever
// the order they were enabled in (integrations/registry.rs).
func TestModuleIDsFollowUpstreamRegistrationOrder(t *testing.T) {
	m, err := LoadModules(writeModules(t, map[string]string{
		"tsjs-core.js": "C", "tsjs-creative.js": "R", "tsjs-gpt.js": "G", "tsjs-prebid.js": "P", "tsjs-didomi.js": "D",
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := m.ModuleIDs([]string{"gpt", "nextjs", "didomi", "prebid"})
	if want := []string{"creative", "prebid", "didomi", "gpt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids %q, want %q (nextjs has no module)", got, want)
	}
}

func TestLoadModulesNeedsCore(t *testing.T) {
	_, err := LoadModules(writeModules(t, map[string]string{"tsjs-creative.js": "R"}))
	if err == nil || !strings.Contains(err.Error(), "tsjs-core") {
		t.Errorf("error %v, want one naming tsjs-core", err)
	}
	if _, err := LoadModules(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("a missing directory loaded")
	}
}

// TestDeferredAndJSLessModulesAsUpstreamRegisters: prebid is served on
// its own URL, not in the unified bundle, and aps and gpt_diagnostics
// never enter the bundle although a module file exists for them
// (registry.rs, with_deferred_js and without_js).
func TestDeferredAndJSLessModulesAsUpstreamRegisters(t *testing.T) {
	m, err := LoadModules(writeModules(t, map[string]string{
		"tsjs-core.js": "C", "tsjs-creative.js": "R", "tsjs-gpt.js": "G", "tsjs-prebid.js": "P",
		"tsjs-aps.js": "A", "tsjs-gpt_diagnostics.js": "D",
	}))
	if err != nil {
		t.Fatal(err)
	}
	enabled := []string{"gpt", "prebid", "aps", "gpt_diagnostics"}
	if got, want := m.ModuleIDs(enabled), []string{"creative", "prebid", "gpt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("module ids %q, want %q", got, want)
	}
	if got, want := m.Immediate(enabled), []string{"creative", "gpt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("immediate %q, want %q", got, want)
	}
	if got, want := m.Deferred(enabled), []string{"prebid"}; !reflect.DeepEqual(got, want) {
		t.Errorf("deferred %q, want %q", got, want)
	}
	if got := m.Deferred([]string{"gpt"}); len(got) != 0 {
		t.Errorf("deferred %q with prebid off, want none", got)
	}
}
