package ssatdtest

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"strings"
	"time"
)

// goroutineLabel is the pprof label every goroutine of one Server carries,
// its value the server's id. The leak check looks for it rather than
// comparing every goroutine of the process before and after, which fails
// under t.Parallel: another test's daemon, client or origin starts and
// stops goroutines at any moment.
const goroutineLabel = "ssatdtest.server"

// leakWait bounds how long a stopped daemon's goroutines may take to end:
// connection goroutines notice a closed socket a moment after Close.
const leakWait = 5 * time.Second

// waitForGoroutines waits up to wait for no goroutine labelled with id to
// be left, and otherwise returns their stacks.
func waitForGoroutines(id string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		left := labelledGoroutines(id)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d still running after %v:\n\n%s", len(left), wait, strings.Join(left, "\n\n"))
		}
		time.Sleep(delay)
	}
}

// labelledGoroutines are the records of the goroutine profile (one per
// distinct stack and labels, with their count) that carry goroutineLabel
// with the value id.
func labelledGoroutines(id string) []string {
	var b bytes.Buffer
	// debug=1 is the format that prints each record's labels, as
	// `# labels: {"key":"value", ...}`.
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		return []string{"the goroutine profile could not be read: " + err.Error()}
	}
	want := fmt.Sprintf("%q:%q", goroutineLabel, id)
	var left []string
	for _, rec := range strings.Split(b.String(), "\n\n") {
		for _, line := range strings.Split(rec, "\n") {
			if labels, ok := strings.CutPrefix(line, "# labels: "); ok && labelsHold(labels, want) {
				left = append(left, strings.TrimSpace(rec))
				break
			}
		}
	}
	return left
}

// labelsHold reports whether a printed label set holds the pair want
// (`"key":"value"`), as an entry and not inside another's value.
func labelsHold(labels, want string) bool {
	labels = strings.TrimSuffix(strings.TrimPrefix(labels, "{"), "}")
	for _, kv := range strings.Split(labels, ", ") {
		if kv == want {
			return true
		}
	}
	return false
}
