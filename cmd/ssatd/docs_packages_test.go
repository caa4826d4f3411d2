package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// goPackageDirs are the folders under root (relative to the repository)
// that hold Go files, testdata and node_modules left out.
func goPackageDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(filepath.Join("../..", root), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".go") {
			return nil
		}
		rel, err := filepath.Rel("../..", filepath.Dir(path))
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); !slices.Contains(dirs, rel) {
			dirs = append(dirs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestREADMEPackageTableListsEveryPackage catches a package that README's
// package table leaves out (internal/daemon, pageparse and devcert were),
// or a row naming a folder that is gone: every folder with Go files under
// internal/ and cmd/ has a row, and every row's folder exists.
func TestREADMEPackageTableListsEveryPackage(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "| package | role |")
	if start < 0 {
		t.Fatal(`README.md has no "| package | role |" table`)
	}
	table, _, _ := strings.Cut(text[start:], "\n\n")
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(table, -1) {
		rows = append(rows, strings.TrimSuffix(m[1], "/"))
	}
	if len(rows) < 10 {
		t.Fatalf("found only %d rows in README's package table: %v", len(rows), rows)
	}
	for _, dir := range append(goPackageDirs(t, "internal"), goPackageDirs(t, "cmd")...) {
		if !slices.Contains(rows, dir) {
			t.Errorf("README's package table has no row for %s: add \"| `%s` | its role |\"", dir, dir)
		}
	}
	for _, row := range rows {
		if fi, err := os.Stat(filepath.Join("../..", row)); err != nil || !fi.IsDir() {
			t.Errorf("README's package table names %s, which is no folder", row)
		}
	}
}
