package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/metrics"
	"github.com/ssatd/ssatd/internal/proxy"
	"github.com/ssatd/ssatd/internal/server"
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
	JSON        bool // print the report as one JSON object instead of text

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

// The client Accept-Encoding values, picked uniformly.
var clientEncodings = []string{"br, gzip", "gzip", "identity", "gzip, deflate, br"}

// Request kinds and their share of the mix (per mille).
const (
	kindEligible    = iota // Sec-Fetch-Dest: document: SSAT-eligible navigation
	kindNonEligible        // Accept: */*: HTML, rewritten, no ad slots or bids
	kindAsset              // /asset.js: pass-through
	numKinds
)

var kindNames = [numKinds]string{"eligible", "non_eligible", "asset"}

func pickKind(rng *rand.Rand) int {
	switch n := rng.IntN(1000); {
	case n < 700:
		return kindEligible
	case n < 900:
		return kindNonEligible
	default:
		return kindAsset
	}
}

// The two proxies.
const (
	proxyMirror = iota
	proxyOffload
	numProxies
)

var proxyNames = [numProxies]string{"mirror", "offload"}

// Error kinds, in report order.
const (
	errTransport    = iota // the request failed before a response arrived
	errStatus              // status != 200
	errCoding              // Content-Encoding unknown or not accepted by the client
	errBodyRead            // reading the body off the wire failed (connection cut, short body)
	errDecode              // the body did not decode as its Content-Encoding
	errNotRewritten        // HTML without the bundle tag (or an eligible page without ad slots)
	errTruncated           // decoded body shorter than the expected page
	errMismatch            // decoded body differs from the expected page
	numErrKinds
)

var errKindNames = [numErrKinds]string{"transport", "status", "coding", "body_read", "decode", "not_rewritten", "truncated", "body_mismatch"}

// Markers looked for in decoded HTML.
var (
	markBundle  = []byte(`id="trustedserver-js"`)
	markAdSlots = []byte(`adSlots=JSON.parse(`)
)

// expect is what a decoded body must be: its length and SHA-256.
type expect struct {
	n   int64
	sum [sha256.Size]byte
}

func expectOf(b []byte) expect { return expect{n: int64(len(b)), sum: sha256.Sum256(b)} }

// resource is one origin path: its encodings and the bodies clients must get.
type resource struct {
	name    string
	path    string
	html    bool
	ctype   string
	coded   map[compress.Coding][]byte // as the origin sends it
	hasHead bool                       // the guest inserts the bundle tag (the page has <head>)
	// want[kind]; for kindEligible also wantNoBids (the auction timed out).
	want       [numKinds]expect
	wantNoBids expect
}

// latency is a summary in milliseconds.
type latency struct {
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	MaxMS float64 `json:"max_ms"`
}

// report is what a run found. It is printed as text or as JSON.
type report struct {
	Command          string             `json:"command,omitempty"`
	GoVersion        string             `json:"go_version"`
	NumCPU           int                `json:"num_cpu"`
	GOMAXPROCS       int                `json:"gomaxprocs"`
	Pages            int                `json:"pages"`
	PagesWithoutHead []string           `json:"pages_without_head,omitempty"`
	CorpusBytes      int64              `json:"corpus_bytes"`
	OriginHeldBytes  int64              `json:"origin_held_bytes"` // all encodings held by the origin
	Concurrency      int                `json:"concurrency"`
	WarmupS          float64            `json:"warmup_s"`
	DurationS        float64            `json:"duration_s"`
	ElapsedS         float64            `json:"elapsed_s"` // measured phase, until the last request finished
	StoppedBy        string             `json:"stopped_by"`
	Requests         int64              `json:"requests"`
	WarmupRequests   int64              `json:"warmup_requests"`
	RequestsPerSec   float64            `json:"requests_per_s"`
	Latency          latency            `json:"latency"`
	LatencyByProxy   map[string]latency `json:"latency_by_proxy"`
	ByProxy          map[string]int64   `json:"requests_by_proxy"`
	ByKind           map[string]int64   `json:"requests_by_kind"`
	ByAcceptEncoding map[string]int64   `json:"requests_by_accept_encoding"`
	ByCoding         map[string]int64   `json:"requests_by_content_encoding"`
	BytesReceived    int64              `json:"bytes_received"` // body bytes on the wire
	BytesDecoded     int64              `json:"bytes_decoded"`
	Errors           int64              `json:"errors"` // warm-up included
	ErrorsByKind     map[string]int64   `json:"errors_by_kind"`
	ErrorSamples     []string           `json:"error_samples,omitempty"`
	AuctionTimeouts  int64              `json:"auction_timeouts"` // eligible pages served with empty bids (not an error)
	// RequestsSent counts every request the clients sent, warm-up
	// included; Recorded is what the proxies' metrics counted of them.
	RequestsSent int64          `json:"requests_sent"`
	Recorded     recordedCounts `json:"metrics_recorded"`

	PeakRSSBytes    int64     `json:"peak_rss_bytes"` // VmHWM
	RSSSeriesMiB    []float64 `json:"rss_series_mib"` // VmRSS every SampleEvery during the measured phase
	RSSMinMiB       float64   `json:"rss_min_mib"`
	RSSMaxMiB       float64   `json:"rss_max_mib"`
	RSSFirstMeanMiB float64   `json:"rss_first_third_mean_mib"`
	RSSLastMeanMiB  float64   `json:"rss_last_third_mean_mib"`
	RSSTrendPct     float64   `json:"rss_trend_pct"`
	RSSTrend        string    `json:"rss_trend"` // flat, up, down, or n/a

	GoroutinesBefore int    `json:"goroutines_before"`
	GoroutinesAfter  int    `json:"goroutines_after"`
	GoroutineSlack   int    `json:"goroutine_tolerance"`
	HeapInuseBytes   uint64 `json:"heap_inuse_bytes"` // after the load, idle connections closed, a final GC
	// HeapInusePoolsFreedBytes is after a second GC, which empties sync.Pools.
	HeapInusePoolsFreedBytes uint64 `json:"heap_inuse_pools_freed_bytes"`
	// GoroutineStacks are the goroutines still running when they did not drain.
	GoroutineStacks string `json:"goroutine_stacks,omitempty"`

	Pass     bool     `json:"pass"`
	Failures []string `json:"failures,omitempty"`
}

// recordedCounts are the proxies' own counts of the requests they served,
// read from their metrics registry after the load.
type recordedCounts struct {
	Requests      int64 `json:"requests_total"`
	DurationCount int64 `json:"request_duration_count"`
	TTFBCount     int64 `json:"time_to_first_byte_count"`
}

// recorded reads the counts, waiting until deadline for them to reach
// want: a request is recorded just after its last byte went out, which can
// be a moment after the client read it.
func (st *stack) recorded(want int64, deadline time.Time) recordedCounts {
	for {
		m := st.metrics
		rc := recordedCounts{
			Requests:      int64(m.Sum("ssatd_requests_total", nil)),
			DurationCount: int64(m.Sum("ssatd_request_duration_seconds", nil)),
			TTFBCount:     int64(m.Sum("ssatd_time_to_first_byte_seconds", nil)),
		}
		done := rc.Requests == want && rc.DurationCount == want && rc.TTFBCount == want
		if done || !time.Now().Before(deadline) {
			return rc
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// run is the whole tool: it starts the origin and the two proxies, loads
// them, and reports. The error is for a run that could not be made; a run
// that found problems returns a report with Pass false.
func run(ctx context.Context, o options, stdout io.Writer) (*report, error) {
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
	return rep, printReport(stdout, rep, o.JSON)
}

// loadResources reads the pages (sorted, first n when n > 0) and encodes
// each in every coding, plus the asset.
func loadResources(dir string, n int) ([]*resource, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("-corpus %s: no *.html files", dir)
	}
	if n > 0 && n < len(names) {
		names = names[:n]
	}
	res := make([]*resource, 0, len(names)+1)
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(p)
		res = append(res, &resource{name: name, path: "/" + name, html: true, ctype: "text/html; charset=utf-8",
			coded: map[compress.Coding][]byte{compress.Identity: b}})
	}
	res = append(res, &resource{name: "asset.js", path: assetPath, ctype: "text/javascript; charset=utf-8",
		coded: map[compress.Coding][]byte{compress.Identity: assetBody()}})

	// Encode once, on every core.
	var wg sync.WaitGroup
	errc := make(chan error, len(res))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var mu sync.Mutex
	for _, r := range res {
		src := r.coded[compress.Identity] // read here: the map is written below
		for _, c := range []compress.Coding{compress.Gzip, compress.Deflate, compress.Brotli} {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				b, err := encode(c, src)
				if err != nil {
					errc <- fmt.Errorf("%s: encode %s: %w", r.name, c, err)
					return
				}
				mu.Lock()
				r.coded[c] = b
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	return res, nil
}

// originOpts are the origin's encoder settings.
var originOpts = compress.Options{GzipLevel: 6, BrotliQuality: 5, BrotliWindow: 22}

func encode(c compress.Coding, b []byte) ([]byte, error) {
	return compress.Encode(c, b, originOpts)
}

// assetBody is a deterministic 64 KiB script.
func assetBody() []byte {
	var b bytes.Buffer
	b.WriteString("/* ssatd-load asset */\n")
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "window.__ssatdLoad%d=function(x){return x*%d+%q;};\n", i, i*7919%1000, strconv.Itoa(i*31))
	}
	return b.Bytes()
}

// stack is the origin and the two proxies, each on its own loopback server.
type stack struct {
	origin    *http.Server
	originURL string
	guests    [numProxies]*proxy.Guest
	servers   [numProxies]*http.Server
	proxyURL  [numProxies]string
	cfgs      [numProxies]*config.Config
	metrics   *metrics.Set // both proxies record here, as one daemon would
	serving   sync.WaitGroup
}

// proxyConfig is a validated configuration as a deployment would have it:
// the defaults, one slot for every path, the static auction with one bid.
func proxyConfig(originURL string, offload bool) (*config.Config, error) {
	c := config.Defaults()
	c.Publisher.Domain = domain
	c.Publisher.OriginURL = originURL
	c.Publisher.SSATCompressionOffloadEnabled = offload
	c.Platform.DeliveryCompression = config.DeliveryCompressionBuiltin
	c.Auction.Enabled = true
	c.Auction.Provider = config.AuctionProviderStatic
	c.CreativeOpportunities.Slots = []config.Slot{{ID: "top", PagePatterns: []string{"/**"}, Formats: [][]int{{728, 90}}, GAMUnitPath: "/1/top"}}
	c.Auction.StaticBids = []config.StaticBid{{SlotID: "top", HbPb: "1.50", HbBidder: "example", W: 728, H: 90, HbAdid: "a1", Adm: "<div>ad</div>"}}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("proxy configuration: %w", err)
	}
	return c, nil
}

// startStack starts the origin and the proxies; the guests log to log
// (the tool passes zap.NewNop: logging would dominate the figures).
func startStack(res []*resource, log *zap.Logger) (st *stack, err error) {
	st = &stack{metrics: metrics.New()}
	defer func() {
		if err != nil {
			st.close()
		}
	}()
	nop := zap.NewNop()
	byPath := make(map[string]*resource, len(res))
	for _, r := range res {
		byPath[r.path] = r
	}
	st.origin = &http.Server{Handler: originHandler(byPath), ReadHeaderTimeout: 10 * time.Second, ErrorLog: zap.NewStdLog(nop)}
	if st.originURL, err = st.serve(st.origin); err != nil {
		return st, err
	}
	for i := range numProxies {
		cfg, err := proxyConfig(st.originURL, i == proxyOffload)
		if err != nil {
			return st, err
		}
		// As newDaemon builds it, with logging off.
		g, err := proxy.New(cfg, proxy.Options{Logger: log, Bundle: bundle.JS(), Metrics: st.metrics})
		if err != nil {
			return st, err
		}
		h, err := server.ClientHandler(cfg, g)
		if err != nil {
			return st, err
		}
		st.cfgs[i], st.guests[i] = cfg, g
		st.servers[i] = server.New(cfg, h, zap.NewStdLog(nop.Named("http")))
		if st.proxyURL[i], err = st.serve(st.servers[i]); err != nil {
			return st, err
		}
	}
	return st, nil
}

// serve starts s on a fresh loopback port and returns its base URL.
func (st *stack) serve(s *http.Server) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	st.serving.Go(func() { _ = s.Serve(ln) })
	return "http://" + ln.Addr().String(), nil
}

func (st *stack) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range append(st.servers[:], st.origin) {
		if s != nil {
			if s.Shutdown(ctx) != nil {
				_ = s.Close()
			}
		}
	}
	st.serving.Wait()
}

// clientTransport is the single client transport: it keeps c connections
// per proxy and never decodes (the client decodes and checks itself).
func (st *stack) clientTransport(c int) *http.Transport {
	return &http.Transport{
		Proxy:               nil, // loopback only, never through HTTP_PROXY
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        2 * c,
		MaxIdleConnsPerHost: c,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// originHandler serves each resource in the coding the request prefers
// (br, then gzip, then deflate, else identity), like a negotiating origin.
func originHandler(byPath map[string]*resource) http.Handler {
	prefer := []compress.Coding{compress.Brotli, compress.Gzip, compress.Deflate}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := byPath[r.URL.Path]
		if res == nil {
			http.NotFound(w, r)
			return
		}
		ae := compress.ParseAcceptEncoding(r.Header.Values("Accept-Encoding"))
		c := compress.Identity
		for _, p := range prefer {
			if ae.Accepts(string(p)) {
				c = p
				break
			}
		}
		b := res.coded[c]
		h := w.Header()
		h.Set("Content-Type", res.ctype)
		h.Set("Vary", "Accept-Encoding")
		h.Set("Cache-Control", "public, max-age=60")
		if c != compress.Identity {
			h.Set("Content-Encoding", string(c))
		}
		h.Set("Content-Length", strconv.Itoa(len(b)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(b)
	})
}

// expectations computes, for every page, the exact body a client must get,
// with the guest's own body pipeline (Transform, identity in and out): an
// eligible navigation with the static bids, the same with empty bids (what
// an auction that missed its deadline gives), and a non-eligible request.
func (st *stack) expectations(res []*resource) error {
	cfg := st.cfgs[proxyMirror]
	withBids, err := proxy.New(cfg, proxy.Options{Logger: zap.NewNop(), Bundle: bundle.JS()})
	if err != nil {
		return err
	}
	noBids, err := proxy.New(cfg, proxy.Options{Logger: zap.NewNop(), Bundle: bundle.JS(), Provider: auction.None{}})
	if err != nil {
		return err
	}
	for _, r := range res {
		if !r.html {
			e := expectOf(r.coded[compress.Identity])
			r.want = [numKinds]expect{e, e, e}
			continue
		}
		for _, k := range []int{kindEligible, kindNonEligible, -1} {
			g := withBids
			kind := k
			if k < 0 {
				g, kind = noBids, kindEligible
			}
			req, err := http.NewRequest(http.MethodGet, "http://"+domain+r.path, nil)
			if err != nil {
				return err
			}
			setKindHeaders(req, kind)
			var out bytes.Buffer
			ts, err := g.Transform(&out, bytes.NewReader(r.coded[compress.Identity]), compress.Identity, compress.Identity, req)
			if err != nil {
				return fmt.Errorf("%s: expected body: %w", r.name, err)
			}
			switch {
			case k < 0:
				r.wantNoBids = expectOf(out.Bytes())
			default:
				r.want[k] = expectOf(out.Bytes())
				r.hasHead = ts.HeadFound
			}
		}
	}
	return nil
}

func setKindHeaders(req *http.Request, kind int) {
	switch kind {
	case kindEligible:
		req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
		req.Header.Set("Sec-Fetch-Dest", "document")
		req.Header.Set("Sec-Fetch-Mode", "navigate")
	case kindNonEligible:
		req.Header.Set("Accept", "*/*")
	case kindAsset:
		req.Header.Set("Accept", "*/*")
		req.Header.Set("Sec-Fetch-Dest", "script")
	}
	req.Header.Set("User-Agent", "ssatd-load/1")
}

// loader runs the client side.
type loader struct {
	opts    options
	res     []*resource
	stack   *stack
	client  *http.Client
	accepts []compress.AcceptEncoding

	start, warmEnd, end time.Time
	issued              atomic.Int64
	sent                atomic.Int64 // requests handed to the client, warm-up included
	hitMax              atomic.Bool
	done                time.Time

	mu     sync.Mutex
	total  workerStats
	errN   [numErrKinds]atomic.Int64
	errMu  sync.Mutex
	errEx  []string
	errAll atomic.Int64
}

// workerStats are one worker's counts for the measured phase.
type workerStats struct {
	lat             [numProxies][]time.Duration
	warm            int64
	byKind          [numKinds]int64
	byAE            [4]int64
	byCoding        map[string]int64
	wire, decoded   int64
	auctionTimeouts int64
}

func (l *loader) runLoad(ctx context.Context) {
	l.start = time.Now()
	l.warmEnd = l.start.Add(l.opts.Warmup)
	l.end = l.warmEnd.Add(l.opts.Duration)
	var wg sync.WaitGroup
	for i := range l.opts.Concurrency {
		wg.Go(func() { l.worker(ctx, i) })
	}
	wg.Wait()
	l.done = time.Now()
}

func (l *loader) worker(ctx context.Context, id int) {
	rng := rand.New(rand.NewPCG(l.opts.Seed, uint64(id)+1))
	ws := workerStats{byCoding: map[string]int64{}}
	w := &clientWork{buf: make([]byte, 32<<10)}
	htmls := len(l.res) - 1 // the asset is last
	for {
		now := time.Now()
		if ctx.Err() != nil || !now.Before(l.end) {
			break
		}
		if l.opts.MaxRequests > 0 && l.issued.Add(1) > l.opts.MaxRequests {
			l.hitMax.Store(true)
			break
		}
		measured := !now.Before(l.warmEnd)
		kind := pickKind(rng)
		r := l.res[len(l.res)-1]
		if kind != kindAsset {
			r = l.res[rng.IntN(htmls)]
		}
		px := rng.IntN(numProxies)
		aei := rng.IntN(len(clientEncodings))
		out := l.one(ctx, w, px, r, kind, aei)
		if ctx.Err() != nil {
			break // interrupted: the last request's failure is ours, not the proxy's
		}
		if out.errKind >= 0 {
			l.fail(out.errKind, fmt.Sprintf("%s %s %s AE=%q: %s", proxyNames[px], kindNames[kind], r.path, clientEncodings[aei], out.detail))
		}
		if !measured {
			ws.warm++
			continue
		}
		ws.lat[px] = append(ws.lat[px], out.elapsed)
		ws.byKind[kind]++
		ws.byAE[aei]++
		ws.byCoding[out.coding]++
		ws.wire += out.wire
		ws.decoded += out.decoded
		if out.noBids {
			ws.auctionTimeouts++
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := &l.total
	if t.byCoding == nil {
		t.byCoding = map[string]int64{}
	}
	for p := range numProxies {
		t.lat[p] = append(t.lat[p], ws.lat[p]...)
	}
	t.warm += ws.warm
	for k := range numKinds {
		t.byKind[k] += ws.byKind[k]
	}
	for i := range ws.byAE {
		t.byAE[i] += ws.byAE[i]
	}
	for c, n := range ws.byCoding {
		t.byCoding[c] += n
	}
	t.wire += ws.wire
	t.decoded += ws.decoded
	t.auctionTimeouts += ws.auctionTimeouts
}

func (l *loader) fail(kind int, detail string) {
	l.errN[kind].Add(1)
	l.errAll.Add(1)
	l.errMu.Lock()
	if len(l.errEx) < 20 {
		l.errEx = append(l.errEx, errKindNames[kind]+": "+detail)
	}
	l.errMu.Unlock()
}

// clientWork is a worker's reusable state.
type clientWork struct {
	buf []byte
	chk checker
}

type outcome struct {
	errKind int // -1: none
	detail  string
	elapsed time.Duration
	coding  string
	wire    int64
	decoded int64
	noBids  bool
}

// one issues one request and checks the response completely.
func (l *loader) one(ctx context.Context, w *clientWork, px int, r *resource, kind, aei int) (out outcome) {
	out.errKind = -1
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.stack.proxyURL[px]+r.path, nil)
	if err != nil {
		out.errKind, out.detail = errTransport, err.Error()
		return out
	}
	req.Host = domain
	setKindHeaders(req, kind)
	req.Header.Set("Accept-Encoding", clientEncodings[aei])

	start := time.Now()
	defer func() { out.elapsed = time.Since(start) }()
	l.sent.Add(1)
	resp, err := l.client.Do(req)
	if err != nil {
		out.errKind, out.detail = errTransport, err.Error()
		return out
	}
	defer resp.Body.Close()
	body := &countingReader{r: resp.Body}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.CopyBuffer(io.Discard, io.LimitReader(body, 1<<20), w.buf)
		out.errKind, out.detail = errStatus, resp.Status
		return out
	}
	ce := strings.Join(resp.Header.Values("Content-Encoding"), ", ")
	c, ok := compress.ParseContentEncoding(ce)
	if !ok || (c != compress.Identity && !l.accepts[aei].Accepts(string(c))) {
		_, _ = io.CopyBuffer(io.Discard, body, w.buf)
		out.errKind, out.detail = errCoding, fmt.Sprintf("Content-Encoding %q", ce)
		return out
	}
	out.coding = string(c)
	dec, err := compress.NewReader(c, body, decodeLimit)
	if err == nil {
		w.chk.reset(r.html)
		_, err = io.CopyBuffer(&w.chk, dec, w.buf)
		dec.Close()
	}
	out.wire, out.decoded = body.n, w.chk.n
	if err != nil {
		if body.err != nil && !errors.Is(body.err, io.EOF) {
			out.errKind, out.detail = errBodyRead, fmt.Sprintf("after %d bytes: %v", body.n, body.err)
		} else {
			out.errKind, out.detail = errDecode, fmt.Sprintf("%s after %d wire bytes: %v", c, body.n, err)
		}
		return out
	}
	var sum [sha256.Size]byte
	w.chk.h.Sum(sum[:0])
	got := expect{n: w.chk.n, sum: sum}
	want := r.want[kind]
	if r.html && r.hasHead && (!w.chk.found[0] || (kind == kindEligible && !w.chk.found[1])) {
		out.errKind, out.detail = errNotRewritten, fmt.Sprintf("bundle tag %v, ad slots %v, %d bytes (%s)", w.chk.found[0], w.chk.found[1], got.n, c)
		return out
	}
	switch {
	case got == want:
	case kind == kindEligible && got == r.wantNoBids:
		out.noBids = true
	case got.n < want.n:
		out.errKind, out.detail = errTruncated, fmt.Sprintf("%d of %d bytes (%s, %d wire bytes)", got.n, want.n, c, body.n)
	default:
		out.errKind, out.detail = errMismatch, fmt.Sprintf("%d bytes, want %d (%s)", got.n, want.n, c)
	}
	return out
}

type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// checker hashes and counts a decoded body and looks for the markers,
// which may straddle two writes.
type checker struct {
	h       hash.Hash
	n       int64
	html    bool
	found   [2]bool
	tail    []byte
	scratch []byte
}

var markers = [2][]byte{markBundle, markAdSlots}

func (c *checker) reset(html bool) {
	if c.h == nil {
		c.h = sha256.New()
	}
	c.h.Reset()
	c.n, c.html, c.found, c.tail = 0, html, [2]bool{}, c.tail[:0]
}

func (c *checker) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	if !c.html {
		return len(p), nil
	}
	keep := max(len(markBundle), len(markAdSlots)) - 1
	edge := append(append(c.scratch[:0], c.tail...), p[:min(len(p), keep)]...)
	c.scratch = edge
	for i, m := range markers {
		if !c.found[i] && (bytes.Contains(edge, m) || bytes.Contains(p, m)) {
			c.found[i] = true
		}
	}
	if len(p) >= keep {
		c.tail = append(c.tail[:0], p[len(p)-keep:]...)
	} else {
		c.tail = append(c.tail, p...)
		if len(c.tail) > keep {
			c.tail = c.tail[:copy(c.tail, c.tail[len(c.tail)-keep:])]
		}
	}
	return len(p), nil
}

// fill copies the load's counts into rep.
func (l *loader) fill(rep *report) {
	t := &l.total
	measuredFrom := l.warmEnd
	if l.done.Before(measuredFrom) {
		measuredFrom = l.done
	}
	rep.ElapsedS = l.done.Sub(measuredFrom).Seconds()
	switch {
	case l.hitMax.Load():
		rep.StoppedBy = "max-requests"
	case l.done.Before(l.end):
		rep.StoppedBy = "interrupted"
	default:
		rep.StoppedBy = "duration"
	}
	var all []time.Duration
	rep.LatencyByProxy = map[string]latency{}
	rep.ByProxy = map[string]int64{}
	for p := range numProxies {
		slices.Sort(t.lat[p])
		rep.LatencyByProxy[proxyNames[p]] = summarize(t.lat[p])
		rep.ByProxy[proxyNames[p]] = int64(len(t.lat[p]))
		all = append(all, t.lat[p]...)
	}
	slices.Sort(all)
	rep.Latency = summarize(all)
	rep.Requests = int64(len(all))
	rep.WarmupRequests = t.warm
	if rep.ElapsedS > 0 {
		rep.RequestsPerSec = float64(rep.Requests) / rep.ElapsedS
	}
	rep.ByKind = map[string]int64{}
	for k := range numKinds {
		rep.ByKind[kindNames[k]] = t.byKind[k]
	}
	rep.ByAcceptEncoding = map[string]int64{}
	for i, ae := range clientEncodings {
		rep.ByAcceptEncoding[ae] = t.byAE[i]
	}
	rep.ByCoding = t.byCoding
	if rep.ByCoding == nil {
		rep.ByCoding = map[string]int64{}
	}
	rep.BytesReceived, rep.BytesDecoded = t.wire, t.decoded
	rep.AuctionTimeouts = t.auctionTimeouts
	rep.ErrorsByKind = map[string]int64{}
	for k := range numErrKinds {
		rep.ErrorsByKind[errKindNames[k]] = l.errN[k].Load()
	}
	rep.Errors = l.errAll.Load()
	rep.ErrorSamples = l.errEx
}

// summarize takes sorted durations; percentiles are nearest-rank.
func summarize(d []time.Duration) latency {
	if len(d) == 0 {
		return latency{}
	}
	pct := func(p float64) float64 {
		i := int(p*float64(len(d))+0.999999) - 1
		return ms(d[min(max(i, 0), len(d)-1)])
	}
	return latency{P50MS: pct(0.50), P99MS: pct(0.99), MaxMS: ms(d[len(d)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// judge decides pass or fail.
func judge(rep *report) {
	if rep.Errors > 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d errors", rep.Errors))
	}
	if rep.GoroutinesAfter > rep.GoroutinesBefore+rep.GoroutineSlack {
		rep.Failures = append(rep.Failures, fmt.Sprintf("goroutines did not drain: %d before, %d after (tolerance +%d)",
			rep.GoroutinesBefore, rep.GoroutinesAfter, rep.GoroutineSlack))
	}
	if rep.Requests+rep.WarmupRequests == 0 {
		rep.Failures = append(rep.Failures, "no requests were made")
	}
	if rep.StoppedBy == "interrupted" {
		rep.Failures = append(rep.Failures, "interrupted")
	} else if r := rep.Recorded; r.Requests != rep.RequestsSent || r.DurationCount != rep.RequestsSent || r.TTFBCount != rep.RequestsSent {
		rep.Failures = append(rep.Failures, fmt.Sprintf("metrics do not count the requests sent (%d): requests_total %d, duration histogram %d, TTFB histogram %d",
			rep.RequestsSent, r.Requests, r.DurationCount, r.TTFBCount))
	}
	rep.Pass = len(rep.Failures) == 0
}

// goroutineStacks is the running goroutines, grouped by stack.
func goroutineStacks() string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}
