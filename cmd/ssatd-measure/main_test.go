package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/measure"
)

// TestMeasureCommandHasBrowser catches ssatd-measure built without its
// browser: -browser must reach the Chromium lookup (here a -chrome that
// does not exist), not the error ssatd gives for it.
func TestMeasureCommandHasBrowser(t *testing.T) {
	chrome := filepath.Join(t.TempDir(), "chromium")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-proxy", "http://127.0.0.1:1", "-url", "/", "-browser", "-chrome", chrome}, &stdout, &stderr, nil)
	if code != 2 || !strings.Contains(stderr.String(), measure.BrowserCommand+": -chrome "+chrome+": ") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "not in this binary") {
		t.Errorf("ssatd-measure says it has no browser:\n%s", stderr.String())
	}
}

// The usage names the command and offers -browser without pointing
// elsewhere for it.
func TestMeasureCommandUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &stdout, &stderr, nil); code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "ssatd-measure -proxy URL") || !strings.Contains(out, "-browser") || strings.Contains(out, "-browser is in") {
		t.Errorf("usage:\n%s", out)
	}
}
