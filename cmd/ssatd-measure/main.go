// Command ssatd-measure is `ssatd measure` with -browser: the same flags
// and reports, and with -proxy -browser the page loaded in headless
// Chromium for TTFB, FCP and LCP (docs/measuring.md). It is a command of
// its own so that ssatd, the binary that serves (the image, `go install
// ./cmd/ssatd`), links no browser tooling.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ssatd/ssatd/internal/measure"
	"github.com/ssatd/ssatd/internal/measure/chromium"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// command is ssatd-measure: measure's command with Chromium.
var command = measure.Command{Name: measure.BrowserCommand, Launch: chromium.Launch}

// run is the whole command line, testable without a process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	return command.Main(ctx, args, stdout, stderr, environ)
}
