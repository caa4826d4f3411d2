// Package measure is `ssatd measure`: what in-guest decompression and
// recompression cost per SSAT page view, and what offloading compression to
// the edge saves (docs/measuring.md).
//
// Every figure comes from the code that serves traffic: the guest body
// pipeline through (*proxy.Guest).Transform and the builtin edge handler
// (internal/edge). Three forms exist: offline pages (-pages DIR), live origins
// (-url URL) and a running daemon (-proxy URL -url PATH).
package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/cputime"
	"github.com/ssatd/ssatd/internal/edge"
	"github.com/ssatd/ssatd/internal/proxy"
	"github.com/ssatd/ssatd/internal/ssat"
)

// Mode is one way the guest handles a page: the coding it arrives in from
// the origin and the coding the guest emits.
type Mode struct {
	Name    string
	In, Out compress.Coding
}

// Mode names, in report order.
const (
	ModeIdentity          = "identity"
	ModeGzipMirror        = "gzip_mirror"
	ModeDeflateMirror     = "deflate_mirror"
	ModeBrMirror          = "br_mirror"
	ModeGzipToIdentity    = "gzip_to_identity"
	ModeDeflateToIdentity = "deflate_to_identity"
	ModeBrToIdentity      = "br_to_identity"
)

// Modes are the guest pipeline modes of docs/measuring.md. identity comes first: it is
// the reference every other output is compared with.
var Modes = []Mode{
	{ModeIdentity, compress.Identity, compress.Identity},
	{ModeGzipMirror, compress.Gzip, compress.Gzip},
	{ModeDeflateMirror, compress.Deflate, compress.Deflate},
	{ModeBrMirror, compress.Brotli, compress.Brotli},
	{ModeGzipToIdentity, compress.Gzip, compress.Identity},
	{ModeDeflateToIdentity, compress.Deflate, compress.Identity},
	{ModeBrToIdentity, compress.Brotli, compress.Identity},
}

// ModeNames lists Modes' names in order.
func ModeNames() []string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = m.Name
	}
	return names
}

// originCodings are the codings an origin may send, besides identity.
var originCodings = []compress.Coding{compress.Gzip, compress.Deflate, compress.Brotli}

// deliveryCodings are what the edge may deliver for an offloaded page.
var deliveryCodings = []string{"br", "gzip"}

// Options configure an offline measurement.
type Options struct {
	Runs                int // timed runs per mode, after one warm-up; at least 1
	OriginGzipLevel     int // gzip and deflate level of the simulated origin
	OriginBrotliQuality int // br quality of the simulated origin (window 22)
	// Config is the guest configuration; nil builds one per page with one
	// slot matching every path, the auction on and empty bids.
	Config *config.Config
}

// Page is one page to measure.
type Page struct {
	Name string // as reported
	Path string // request path the guest sees, e.g. "/yahoo-3.html"
	Body []byte // identity HTML as the origin holds it
	// Origin is scheme://host of the origin the page came from, used for
	// the default configuration ("" guesses from the page's canonical link).
	Origin string
}

// corruptHook lets tests damage one mode's output before it is checked, to
// prove that equivalence failures are detected. nil in production.
var corruptHook func(page, mode string, out []byte) []byte

// measurer holds the state of one offline measurement.
type measurer struct {
	opts   Options
	shared *proxy.Guest // when opts.Config is set
	out    bytes.Buffer // reused output buffer
}

func newMeasurer(o Options) (*measurer, error) {
	if o.Runs < 1 {
		return nil, fmt.Errorf("runs must be at least 1, got %d", o.Runs)
	}
	if err := compress.GzipLevels.Check("origin gzip level", o.OriginGzipLevel); err != nil {
		return nil, err
	}
	if err := compress.BrotliQualities.Check("origin brotli quality", o.OriginBrotliQuality); err != nil {
		return nil, err
	}
	m := &measurer{opts: o}
	if o.Config != nil {
		g, err := proxy.New(o.Config, proxy.Options{Bundle: bundle.JS()})
		if err != nil {
			return nil, err
		}
		m.shared = g
	}
	return m, nil
}

// DefaultDomain is the client-facing host of the default configuration.
const DefaultDomain = "www.pub.example"

// DefaultConfig is the configuration used without -config: the origin at
// originURL, one slot matching every path, the auction on with the "none"
// provider (empty bids), so that every page gets the SSAT injection.
func DefaultConfig(originURL string) (*config.Config, error) {
	c := config.Defaults()
	c.Publisher.Domain = DefaultDomain
	c.Publisher.OriginURL = originURL
	c.Auction.Enabled = true
	c.Auction.Provider = config.AuctionProviderNone
	c.CreativeOpportunities.Slots = []config.Slot{{ID: "measure", PagePatterns: []string{"/**"}}}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// canonicalRe finds the scheme and host[:port] of a canonical link or og:url.
var canonicalRe = regexp.MustCompile(`(?i)<link[^>]+rel=["']?canonical["']?[^>]*href=["']?(https?)://([a-z0-9.-]+(?::[0-9]+)?)|property=["']og:url["'][^>]*content=["'](https?)://([a-z0-9.-]+(?::[0-9]+)?)`)

// fallbackOrigin stands in for a page that names no origin of its own: none
// of its links name it, so none is rewritten.
const fallbackOrigin = "https://origin.pub.example"

// Where a page's origin came from (PageResult.OriginFrom).
const (
	originFromConfig    = "config"
	originFromURL       = "url"
	originFromCanonical = "canonical link"
	originFromOGURL     = "og:url"
	originFromFallback  = "fallback"
)

// guessOrigin is scheme://host[:port] of the page's canonical link or
// og:url, so that the URL rules rewrite the page's own links as they would
// in front of that site; the port matters, as it does to the rules.
func guessOrigin(page []byte) (origin, from string) {
	m := canonicalRe.FindSubmatch(page[:min(len(page), 256<<10)])
	switch {
	case m == nil:
		return fallbackOrigin, originFromFallback
	case len(m[2]) > 0:
		return string(m[1]) + "://" + strings.ToLower(string(m[2])), originFromCanonical
	default:
		return string(m[3]) + "://" + strings.ToLower(string(m[4])), originFromOGURL
	}
}

// setup returns the guest for a page, its configuration, and the origin
// the page is measured as coming from, with where that origin came from.
func (m *measurer) setup(p Page) (g *proxy.Guest, cfg *config.Config, origin, from string, err error) {
	if m.shared != nil {
		u := *m.opts.Config.Publisher.Origin
		u.User = nil // the report is shared; credentials stay out of it
		return m.shared, m.opts.Config, u.String(), originFromConfig, nil
	}
	origin, from = p.Origin, originFromURL
	if origin == "" {
		origin, from = guessOrigin(p.Body)
	}
	cfg, err = DefaultConfig(origin)
	if err != nil {
		return nil, nil, origin, from, err
	}
	g, err = proxy.New(cfg, proxy.Options{Bundle: bundle.JS()})
	return g, cfg, origin, from, err
}

// sample is one timed run.
type sample struct {
	wall, cpu time.Duration
}

// timed runs f on the calling goroutine locked to its OS thread and returns
// its wall time and the CPU time of that thread.
func timed(f func() error) (sample, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok0 := cputime.Thread()
	t0 := time.Now()
	err := f()
	wall := time.Since(t0)
	c1, ok1 := cputime.Thread()
	s := sample{wall: wall}
	if ok0 && ok1 {
		s.cpu = c1 - c0
	}
	return s, err
}

// measurePage measures every mode of one page.
func (m *measurer) measurePage(ctx context.Context, p Page) (PageResult, error) {
	res := PageResult{
		Name:           p.Name,
		Path:           p.Path,
		IdentityBytes:  int64(len(p.Body)),
		OriginBytes:    map[string]int64{},
		Modes:          map[string]ModeResult{},
		DeliveredBytes: map[string]int64{},
		DeliveredCPUMS: map[string]float64{},
	}
	g, cfg, origin, from, err := m.setup(p)
	res.Origin, res.OriginFrom = origin, from
	if err != nil {
		return res, err
	}
	sources := map[compress.Coding][]byte{compress.Identity: p.Body}
	for _, c := range originCodings {
		b, err := compress.Encode(c, p.Body, compress.Options{GzipLevel: m.opts.OriginGzipLevel, BrotliQuality: m.opts.OriginBrotliQuality, BrotliWindow: 22})
		if err != nil {
			return res, err
		}
		sources[c] = b
		res.OriginBytes[string(c)] = int64(len(b))
	}
	domain := cfg.Publisher.Domain
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, p.Path, nil)
	req.Host = domain
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Accept", "text/html")

	var reference []byte // identity output
	limit := cfg.Publisher.MaxDecodedBodyBytes
	for _, mode := range Modes {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		// Transform has no latency flushes (docs/decisions.md, entry 14),
		// so every run should give the same bytes; should a timed run's
		// encoded bytes differ anyway, what must not differ is the decoded
		// page.
		check := func(out []byte) string { return sameDecoded(mode.Out, out, reference, limit) }
		if mode.Name == ModeIdentity {
			check = func([]byte) string { return "identity output differs between runs" }
		}
		mr, out, err := m.measureMode(g, p.Name, sources[mode.In], mode, req, check)
		if err != nil {
			res.fail(mode.Name, err.Error())
			res.Modes[mode.Name] = mr.ModeResult
			continue
		}
		if mode.Name == ModeIdentity {
			reference = out
			res.Eligible = mr.eligible
			res.ProcessedBytes = mr.processed
			mr.Equivalent = true
		} else if reference == nil {
			res.fail(mode.Name, "no identity output to compare with")
		} else if why := sameDecoded(mode.Out, out, reference, limit); why != "" {
			res.fail(mode.Name, why)
		} else {
			mr.Equivalent = true
		}
		res.Modes[mode.Name] = mr.ModeResult
	}
	if reference != nil {
		m.measureDelivery(&res, cfg, reference)
	}
	return res, nil
}

// modeRun is what measureMode knows beyond the report fields.
type modeRun struct {
	ModeResult
	eligible  bool
	processed int64
}

// measureMode runs one mode once to warm up, then Runs times timed. It
// returns the output of the warm-up run; a timed run whose output differs
// from it must pass check ("" = fine).
func (m *measurer) measureMode(g *proxy.Guest, page string, src []byte, mode Mode, req *http.Request, check func([]byte) string) (modeRun, []byte, error) {
	mr := modeRun{ModeResult: ModeResult{In: string(mode.In), Out: string(mode.Out), InBytes: int64(len(src))}}
	var first []byte
	var walls, cpus, guest []float64
	for run := 0; run <= m.opts.Runs; run++ {
		m.out.Reset()
		var st proxy.TransformStats
		s, err := timed(func() error {
			var err error
			st, err = g.Transform(&m.out, bytes.NewReader(src), mode.In, mode.Out, req)
			return err
		})
		if err != nil {
			return mr, nil, fmt.Errorf("transform: %w", err)
		}
		out := m.out.Bytes()
		if corruptHook != nil {
			out = corruptHook(page, mode.Name, out)
		}
		if run == 0 {
			first = bytes.Clone(out)
			mr.OutBytes = int64(len(first))
			mr.eligible = st.Eligible
			mr.processed = st.ProcessedBytes
			continue
		}
		if !bytes.Equal(out, first) {
			if why := check(out); why != "" {
				return mr, nil, fmt.Errorf("timed run %d: %s", run, why)
			}
		}
		walls = append(walls, ms(s.wall))
		cpus = append(cpus, ms(s.cpu))
		guest = append(guest, ms(st.GuestTime))
	}
	mr.WallMS, mr.CPUMS, mr.GuestMS = Median(walls), Median(cpus), Median(guest)
	return mr, first, nil
}

// measureDelivery runs the identity output through the builtin edge at the
// configured delivery levels, once per delivery coding (plus a warm-up),
// and checks that what it delivers decodes to the identity output.
func (m *measurer) measureDelivery(res *PageResult, cfg *config.Config, identityOut []byte) {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set(ssat.HintHeader, "on")
		for p := identityOut; len(p) > 0; {
			n := min(len(p), 32<<10) // the guest's buffer size
			_, _ = w.Write(p[:n])
			p = p[n:]
		}
	})
	e, err := edge.FromConfig(inner, cfg.Delivery)
	if err != nil {
		res.fail("delivered", err.Error())
		return
	}
	for _, coding := range deliveryCodings {
		name := "delivered_" + coding
		req := httptest.NewRequest(http.MethodGet, res.Path, nil)
		req.Header.Set("Accept-Encoding", coding)
		var cpus []float64
		var body []byte
		for run := 0; run <= m.opts.Runs; run++ {
			rec := httptest.NewRecorder()
			s, _ := timed(func() error { e.ServeHTTP(rec, req); return nil })
			if run == 0 {
				body = rec.Body.Bytes()
				if ce := rec.Header().Get("Content-Encoding"); ce != coding {
					res.fail(name, fmt.Sprintf("the edge delivered Content-Encoding %q, want %q", ce, coding))
					body = nil
					break
				}
				continue
			}
			cpus = append(cpus, ms(s.cpu))
		}
		if body == nil {
			continue
		}
		res.DeliveredBytes[coding] = int64(len(body))
		res.DeliveredCPUMS[coding] = Median(cpus)
		if why := sameDecoded(compress.Coding(coding), body, identityOut, cfg.Publisher.MaxDecodedBodyBytes); why != "" {
			res.fail(name, why)
		}
	}
}

func (r *PageResult) fail(mode, why string) {
	r.Failures = append(r.Failures, mode+": "+why)
}

// sameDecoded decodes out as coding c and compares it with want; "" means
// equal, otherwise it says where they differ.
func sameDecoded(c compress.Coding, out, want []byte, limit int64) string {
	dec, err := compress.NewReader(c, bytes.NewReader(out), limit)
	if err != nil {
		return fmt.Sprintf("decode %s: %v", c, err)
	}
	got, err := io.ReadAll(dec)
	dec.Close()
	if err != nil {
		return fmt.Sprintf("decode %s: %v", c, err)
	}
	if bytes.Equal(got, want) {
		return ""
	}
	return fmt.Sprintf("decoded output differs from the identity output at byte %d (%d vs %d bytes)", firstDiff(got, want), len(got), len(want))
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// differingBytes is the size of the region where a and b differ: the bytes
// of the longer one outside their common prefix and common suffix.
func differingBytes(a, b []byte) int64 {
	p := firstDiff(a, b)
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return int64(max(len(a), len(b)) - p - s)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Median of xs (the mean of the two middle values for an even count); 0
// for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Pages measures pages in order; progress (may be nil) is called after
// each. The error is for a failure that stops the measurement (the context,
// a bad option); per-page problems are in the results.
func Pages(ctx context.Context, pages []Page, o Options, progress func()) ([]PageResult, error) {
	m, err := newMeasurer(o)
	if err != nil {
		return nil, err
	}
	results := make([]PageResult, 0, len(pages))
	for _, p := range pages {
		r, err := m.measurePage(ctx, p)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return results, ctxErr
			}
			r.fail("setup", err.Error())
		}
		results = append(results, r)
		if progress != nil {
			progress()
		}
	}
	return results, nil
}

var errNoPages = errors.New("no *.html pages")
