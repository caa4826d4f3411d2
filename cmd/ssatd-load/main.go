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
	"encoding/json"
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
	fs.BoolVar(&o.JSON, "json", false, "print the report as one JSON object")
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
	rep, err := run(ctx, o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd-load: %v\n", err)
		return 1
	}
	if !rep.Pass {
		fmt.Fprintf(stderr, "ssatd-load: FAIL: %s\n", strings.Join(rep.Failures, "; "))
		return 1
	}
	return 0
}

// printReport writes rep as text, or as one JSON object.
func printReport(w io.Writer, rep *report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	p := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-18s %s\n", label, fmt.Sprintf(format, args...))
	}
	p("machine", "%s, %d CPUs, GOMAXPROCS %d", rep.GoVersion, rep.NumCPU, rep.GOMAXPROCS)
	p("corpus", "%d pages, %.1f MiB identity (%.1f MiB held by the origin in 4 codings)",
		rep.Pages, float64(rep.CorpusBytes)/mib, float64(rep.OriginHeldBytes)/mib)
	if len(rep.PagesWithoutHead) > 0 {
		p("", "without <head> (no bundle tag expected): %s", strings.Join(rep.PagesWithoutHead, ", "))
	}
	p("load", "c=%d, warm-up %gs, measured %.1fs (stopped by %s)", rep.Concurrency, rep.WarmupS, rep.ElapsedS, rep.StoppedBy)
	p("requests", "%d measured (+%d in warm-up)", rep.Requests, rep.WarmupRequests)
	p("", "by proxy: %s", counts(rep.ByProxy, proxyNames[:]...))
	p("", "by kind: %s", counts(rep.ByKind, kindNames[:]...))
	p("", "by Accept-Encoding: %s", counts(rep.ByAcceptEncoding, clientEncodings...))
	p("", "by Content-Encoding received: %s", counts(rep.ByCoding, "br", "gzip", "deflate", "identity"))
	p("requests/s", "%.1f", rep.RequestsPerSec)
	p("latency", "p50 %.1fms  p99 %.1fms  max %.1fms", rep.Latency.P50MS, rep.Latency.P99MS, rep.Latency.MaxMS)
	for _, n := range proxyNames {
		l := rep.LatencyByProxy[n]
		p("", "%-7s p50 %.1fms  p99 %.1fms  max %.1fms", n, l.P50MS, l.P99MS, l.MaxMS)
	}
	p("errors", "%d (warm-up included): %s", rep.Errors, counts(rep.ErrorsByKind, errKindNames[:]...))
	for _, e := range rep.ErrorSamples {
		p("", "%s", e)
	}
	p("metrics", "%d requests sent; the proxies recorded requests_total %d, duration histogram %d, TTFB histogram %d",
		rep.RequestsSent, rep.Recorded.Requests, rep.Recorded.DurationCount, rep.Recorded.TTFBCount)
	p("auction timeouts", "%d (eligible pages served with empty bids; not an error)", rep.AuctionTimeouts)
	p("bytes received", "%.1f MiB on the wire, %.1f MiB decoded", float64(rep.BytesReceived)/mib, float64(rep.BytesDecoded)/mib)
	p("peak RSS", "%.1f MiB (VmHWM, whole run including start-up)", float64(rep.PeakRSSBytes)/mib)
	p("RSS after warm-up", "min %.1f MiB, max %.1f MiB over %d samples; first third mean %.1f, last third mean %.1f (%+.1f%%): %s",
		rep.RSSMinMiB, rep.RSSMaxMiB, len(rep.RSSSeriesMiB), rep.RSSFirstMeanMiB, rep.RSSLastMeanMiB, rep.RSSTrendPct, rep.RSSTrend)
	p("RSS series (MiB)", "%s", series(rep.RSSSeriesMiB))
	p("goroutines", "%d before the load, %d after (tolerance +%d)", rep.GoroutinesBefore, rep.GoroutinesAfter, rep.GoroutineSlack)
	p("heap in use", "%.1f MiB after a final GC (%.1f MiB after a second one, which empties the codec pools)",
		float64(rep.HeapInuseBytes)/mib, float64(rep.HeapInusePoolsFreedBytes)/mib)
	if rep.GoroutineStacks != "" {
		p("goroutines left", "\n%s", rep.GoroutineStacks)
	}
	if rep.Pass {
		p("result", "PASS")
	} else {
		p("result", "FAIL: %s", strings.Join(rep.Failures, "; "))
	}
	return nil
}

func counts(m map[string]int64, order ...string) string {
	var b strings.Builder
	for i, k := range order {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	return b.String()
}

func series(v []float64) string {
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.0f", x)
	}
	return b.String()
}
