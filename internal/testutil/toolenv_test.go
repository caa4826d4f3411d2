package testutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestToolEnvListsEveryToolVariable catches a variable that a test reads
// (os.Getenv, os.LookupEnv) or .ci/run names missing from ToolEnv, where
// ssatd's variable check is not proven to leave it alone: a test would
// pass on its own and a daemon started under CI's environment would
// refuse to start.
func TestToolEnvListsEveryToolVariable(t *testing.T) {
	read := regexp.MustCompile(`(?:Getenv|LookupEnv)\("(SSATD_[A-Z0-9_]+)"\)|(?:Getenv|LookupEnv)\((StrictEnv)\)`)
	found := map[string]string{}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "../..") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range read.FindAllStringSubmatch(string(b), -1) {
			name := m[1]
			if m[2] != "" {
				name = StrictEnv
			}
			found[name] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`SSATD_[A-Z0-9_]+`).FindAllString(string(ci), -1) {
		found[name] = ".ci/run"
	}
	if len(found) < 5 || found["SSATD_CORPUS"] == "" {
		t.Fatalf("found only %v: the scan is broken", found)
	}
	for name, where := range found {
		if !slices.Contains(ToolEnv, name) {
			t.Errorf("%s reads or sets %s, which ToolEnv does not list", where, name)
		}
	}
}
