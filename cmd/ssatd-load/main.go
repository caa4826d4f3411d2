// Command ssatd-load load-tests ssatd in one process, on loopback only: it
// starts an origin serving a folder of pages with real content negotiation,
// two ssatd data paths built as the daemon builds them (one in mirror mode,
// one with compression offload), and -c clients that fetch, decode and check
// a mix of requests for -d. It reports throughput, latency, errors by kind,
// memory (peak and the RSS series) and whether goroutines drain afterwards.
//
//	ssatd-load -corpus /path/to/corpus -c 64 -d 60s [-pages N] [-max-requests N]
//	           [-warmup 10s] [-seed N] [-json]
//
// Exit status: 0 when every response was correct and the goroutines drained,
// 1 otherwise (or when the run could not be made), 2 for a usage error.
// See docs/reliability.md, section Load.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli parses the flags, runs, and returns the exit status.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ssatd-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.Corpus, "corpus", "", "folder of *.html pages served by the origin (required)")
	fs.IntVar(&o.Pages, "pages", 0, "serve only the first N pages (sorted by name); 0 serves all")
	fs.IntVar(&o.Concurrency, "c", 64, "concurrent clients (1..1024)")
	fs.DurationVar(&o.Duration, "d", 60*time.Second, "measured duration, after the warm-up (at most 1h)")
	fs.DurationVar(&o.Warmup, "warmup", 10*time.Second, "warm-up before measuring; its requests are checked but not counted")
	fs.Int64Var(&o.MaxRequests, "max-requests", 0, "stop after N requests, warm-up included; 0 means no limit but -d")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the request mix")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ssatd-load -corpus DIR [-c 64] [-d 60s] [-warmup 10s] [-pages N] [-max-requests N] [-seed N] [-json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ssatd-load: unexpected arguments %q\n", fs.Args())
		fs.Usage()
		return 2
	}
	if err := o.check(); err != nil {
		fmt.Fprintf(stderr, "ssatd-load: %v\n", err)
		return 2
	}
	o.Progress = stderr
	rep, err := run(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd-load: %v\n", err)
		return 1
	}
	if err := printReport(stdout, rep, *asJSON); err != nil {
		fmt.Fprintf(stderr, "ssatd-load: %v\n", err)
		return 1
	}
	if !rep.Pass {
		fmt.Fprintf(stderr, "ssatd-load: FAIL: %s\n", strings.Join(rep.Failures, "; "))
		return 1
	}
	return 0
}
