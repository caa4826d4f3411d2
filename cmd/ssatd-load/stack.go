package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
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

// The two proxies.
const (
	proxyMirror = iota
	proxyOffload
	numProxies
)

var proxyNames = [numProxies]string{"mirror", "offload"}

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
	if st.originURL, err = st.serve(st.origin, st.origin.Serve); err != nil {
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
		if st.proxyURL[i], err = st.serve(st.servers[i], nil); err != nil {
			return st, err
		}
	}
	return st, nil
}

// serve starts s on a fresh loopback port and returns its base URL. A
// proxy (plain nil) is served as ssatd serve serves it, behind the
// connection guards of internal/server; the origin with plain.
func (st *stack) serve(s *http.Server, plain func(net.Listener) error) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	if plain == nil {
		st.serving.Go(func() { _ = server.Serve(s, ln) })
	} else {
		st.serving.Go(func() { _ = plain(ln) })
	}
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

// originHandler serves each resource in the coding the request prefers,
// ties going to br, then gzip, then deflate (else identity), like a
// negotiating origin.
func originHandler(byPath map[string]*resource) http.Handler {
	prefer := []compress.Coding{compress.Brotli, compress.Gzip, compress.Deflate}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := byPath[r.URL.Path]
		if res == nil {
			http.NotFound(w, r)
			return
		}
		c := compress.ParseAcceptEncoding(r.Header.Values("Accept-Encoding")).Choose(prefer...)
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
