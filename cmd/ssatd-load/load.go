package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/compress"
)

// options are the run's settings; the flags map onto the first group.
type options struct {
	Corpus      string
	Pages       int // 0: every *.html of Corpus
	Concurrency int
	Duration    time.Duration
	Warmup      time.Duration
	MaxRequests int64 // 0: no limit; counts warm-up requests too
	Seed        uint64

	// Not flags (tests shorten them).
	GoroutineSlack int           // tolerated goroutines above the baseline; 0 means 5
	DrainTimeout   time.Duration // wait for goroutines to drain; 0 means 5s
	SampleEvery    time.Duration // RSS sampling period; 0 means 1s
	Progress       io.Writer     // one-line progress messages; nil discards
}

func (o *options) check() error {
	var errs []error
	if o.Corpus == "" {
		errs = append(errs, errors.New("-corpus is required"))
	}
	if o.Pages < 0 {
		errs = append(errs, fmt.Errorf("-pages %d is negative", o.Pages))
	}
	if o.Concurrency < 1 || o.Concurrency > 1024 {
		errs = append(errs, fmt.Errorf("-c %d out of range 1..1024", o.Concurrency))
	}
	if o.Duration <= 0 || o.Duration > time.Hour {
		errs = append(errs, fmt.Errorf("-d %s out of range (0, 1h]", o.Duration))
	}
	if o.Warmup < 0 || o.Warmup > 10*time.Minute {
		errs = append(errs, fmt.Errorf("-warmup %s out of range [0, 10m]", o.Warmup))
	}
	if o.MaxRequests < 0 {
		errs = append(errs, fmt.Errorf("-max-requests %d is negative", o.MaxRequests))
	}
	if o.GoroutineSlack <= 0 {
		o.GoroutineSlack = 5
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 5 * time.Second
	}
	if o.SampleEvery <= 0 {
		o.SampleEvery = time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return errors.Join(errs...)
}

const (
	domain    = "www.pub.example"
	assetPath = "/asset.js"
	// decodeLimit bounds what a client decodes from one response.
	decodeLimit = 64 << 20
)

// run is the whole tool but the printing: it starts the origin and the two
// proxies, loads them, and returns the report. The error is for a run that could not be made; a run
// that found problems returns a report with Pass false.
func run(ctx context.Context, o options) (*report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	rep := &report{
		GoVersion: runtime.Version(), NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Concurrency: o.Concurrency, WarmupS: o.Warmup.Seconds(), DurationS: o.Duration.Seconds(),
		GoroutineSlack: o.GoroutineSlack,
	}
	fmt.Fprintf(o.Progress, "ssatd-load: reading and encoding %s\n", o.Corpus)
	res, err := loadResources(o.Corpus, o.Pages)
	if err != nil {
		return nil, err
	}
	for _, r := range res {
		if r.html {
			rep.Pages++
			rep.CorpusBytes += int64(len(r.coded[compress.Identity]))
		}
		for _, b := range r.coded {
			rep.OriginHeldBytes += int64(len(b))
		}
	}

	st, err := startStack(res, zap.NewNop())
	if err != nil {
		return nil, err
	}
	defer st.close()
	if err := st.expectations(res); err != nil {
		return nil, err
	}
	for _, r := range res {
		if r.html && !r.hasHead {
			rep.PagesWithoutHead = append(rep.PagesWithoutHead, r.name)
		}
	}

	sampler := startSampler(o.SampleEvery)
	defer sampler.stop()
	runtime.GC()
	rep.GoroutinesBefore = runtime.NumGoroutine()

	l := &loader{
		opts: o, res: res, stack: st,
		client: &http.Client{
			Transport: st.clientTransport(o.Concurrency),
			Timeout:   60 * time.Second,
			// The proxies never redirect here; a redirect would be a bug to see.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	for _, ae := range clientEncodings {
		l.accepts = append(l.accepts, compress.ParseAcceptEncoding([]string{ae}))
	}
	fmt.Fprintf(o.Progress, "ssatd-load: %d pages, origin %s, mirror %s, offload %s; warm-up %s, then %s at c=%d\n",
		rep.Pages, st.originURL, st.proxyURL[proxyMirror], st.proxyURL[proxyOffload], o.Warmup, o.Duration, o.Concurrency)
	l.runLoad(ctx)
	loadEnd := time.Now()

	// Drain: close the client's idle connections, and the origin's (the
	// guests' origin pools would otherwise keep theirs for IdleConnTimeout),
	// again and again: a connection whose last body was just read goes
	// back to its pool a moment after the request returned.
	deadline := time.Now().Add(o.DrainTimeout)
	for {
		l.client.CloseIdleConnections()
		st.origin.SetKeepAlivesEnabled(false)
		if runtime.NumGoroutine() <= rep.GoroutinesBefore || !time.Now().Before(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	rep.RequestsSent = l.sent.Load()
	rep.Recorded = st.recorded(rep.RequestsSent, deadline)
	rep.GoroutinesAfter = runtime.NumGoroutine()
	if rep.GoroutinesAfter > rep.GoroutinesBefore+o.GoroutineSlack {
		rep.GoroutineStacks = goroutineStacks()
	}
	samples := sampler.stop()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	rep.HeapInuseBytes = ms.HeapInuse
	// sync.Pool keeps its contents (the codecs' pooled encoders and
	// decoders) through one collection; the second shows what is retained.
	runtime.GC()
	runtime.ReadMemStats(&ms)
	rep.HeapInusePoolsFreedBytes = ms.HeapInuse
	rep.PeakRSSBytes = procStatusKB("VmHWM") * 1024

	l.fill(rep)
	rssSummary(rep, samples, l.warmEnd, loadEnd)
	judge(rep)
	return rep, nil
}
