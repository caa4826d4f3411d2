package chromium

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/testutil"
)

// flakyChromium writes a launcher that exits at its first n launches,
// printing what a Chromium that dies in start-up prints, and runs the real
// Chromium after that. It returns the launcher and a function that counts
// its launches.
func flakyChromium(t *testing.T, real string, n int) (string, func() int) {
	t.Helper()
	dir := t.TempDir()
	count := filepath.Join(dir, "launches")
	script := "#!/bin/sh\necho x >> " + count + "\n" +
		"if [ \"$(wc -l < " + count + ")\" -le " + string(rune('0'+n)) + " ]; then\n" +
		"  echo 'crashpad: no stack mapping' >&2; exit 1\nfi\n" +
		"exec " + real + " \"$@\"\n"
	bin := filepath.Join(dir, "chromium")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
}

// TestStartChromiumRetriesAFailedLaunch: a Chromium that exits during
// start-up is launched again, and the measurement goes on with the one that
// starts; one that never starts is an error naming every attempt.
func TestStartChromiumRetriesAFailedLaunch(t *testing.T) {
	real := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	bin, launches := flakyChromium(t, real, 2)
	_, product, stop, err := Start(ctx, bin)
	if err != nil {
		t.Fatalf("a Chromium that fails its first two launches: %v", err)
	}
	stop()
	if got := launches(); got != 3 {
		t.Errorf("launched %d times, want 3", got)
	}
	if product == "" {
		t.Error("no browser version")
	}

	bin, launches = flakyChromium(t, real, 9)
	_, _, _, err = Start(ctx, bin)
	if err == nil {
		t.Fatalf("a launch that always fails started")
	}
	if got := launches(); got != browserStarts {
		t.Errorf("launched %d times, want %d", got, browserStarts)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("%d times", browserStarts)) || strings.Count(err.Error(), "crashpad") != browserStarts {
		t.Errorf("error does not name every attempt: %v", err)
	}
}
