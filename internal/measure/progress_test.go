package measure

import (
	"os"
	"testing"
)

// TestProgressOnlyOnATerminal: a redirected stderr (a pipe) gets no
// progress line, a character device (the kind a terminal is) does.
func TestProgressOnlyOnATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if step, done := progressFor(w, 3); step != nil {
		done()
		t.Error("a progress line drawn into a pipe")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	step, done := progressFor(null, 3)
	if step == nil {
		t.Fatalf("no progress line on %s, a character device", os.DevNull)
	}
	for range 3 {
		step()
	}
	done()
}
