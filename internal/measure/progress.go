package measure

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressFor returns a per-page callback that redraws "measuring 3/65
// pages, about 40s left" on stderr when stderr is a terminal, and a
// function to call when done, which clears the line. Otherwise both do
// nothing, so that a redirected stderr holds only the messages.
func progressFor(stderr io.Writer, n int) (func(), func()) {
	f, ok := stderr.(*os.File)
	if !ok || n == 0 || !isTerminal(f) {
		return nil, func() {}
	}
	start, done := time.Now(), 0
	draw := func() {
		line := fmt.Sprintf("measuring %d/%d pages", done, n)
		if done > 0 && done < n {
			left := time.Since(start) / time.Duration(done) * time.Duration(n-done)
			line += fmt.Sprintf(", about %s left", left.Round(time.Second))
		}
		// \r returns to the line's start, ESC [K (ECMA-48 EL) erases what
		// a longer previous line left.
		fmt.Fprintf(f, "\r\x1b[K%s", line)
	}
	draw()
	return func() { done++; draw() }, func() { fmt.Fprint(f, "\r\x1b[K") }
}

// isTerminal: f is a character device. That takes /dev/null for a
// terminal too, where the line is drawn to no one; telling them apart
// needs an ioctl per platform (golang.org/x/term), which ssatd, the binary
// that serves, does not link for a progress line.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
