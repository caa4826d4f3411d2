// Package proxy is the guest of spec §0: the SSAT handler that fetches the
// publisher origin's page, decides whether it is eligible, classifies the
// response, rewrites HTML while it streams and applies the header policy.
//
// It is built on net/http/httputil.ReverseProxy. Each decision lives in one
// place: the origin request in origin.go, eligibility in eligibility.go,
// response classification in classify.go, the header policy in headers.go,
// the body pipeline and its limits in pipeline.go and limits.go, and the
// mapping of failures to client-visible results in errors.go.
package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
)

// Options are the parts of a Guest that are not configuration.
type Options struct {
	// Logger receives one access line per request; nil discards.
	Logger *zap.Logger
	// Transport overrides the origin transport (tests); nil builds one from
	// the configured timeouts.
	Transport http.RoundTripper
	// Bundle is the client bundle whose hash goes into the script tag.
	Bundle []byte
	// Provider overrides the auction provider named in the configuration.
	Provider auction.Provider
	// Metrics counts outcomes; nil allocates a private set.
	Metrics *Metrics
	// FlushLatency bounds how long rewritten bytes may wait in buffers
	// before they are pushed to the client; 0 means 50ms.
	FlushLatency time.Duration
}

// Guest is the SSAT handler. It is safe for concurrent use.
type Guest struct {
	origin         *url.URL
	originHost     string
	hostOverride   string
	hosts          hostPolicy
	bots           []string
	slots          []config.Slot
	auctionEnabled bool
	auctionTimeout time.Duration
	provider       auction.Provider
	needPurpose1   bool // [consent] require_tcf_purpose1
	bundle         []byte
	bundleHash     string
	bundleTag      []byte
	codecOpts      compress.Options
	offload        bool   // offload is enabled and delivery compression available (§5.3, §5.5)
	offloadAE      string // "identity" or "negotiate"
	platform       string
	rawLimit       int64
	decodedLimit   int64
	idleTimeout    time.Duration
	flushLatency   time.Duration
	diagnostics    bool
	allowOverride  bool
	log            *zap.Logger
	metrics        *Metrics
	rp             *httputil.ReverseProxy
}

// New builds a Guest from a validated configuration.
func New(cfg *config.Config, o Options) (*Guest, error) {
	if cfg.Publisher.Origin == nil {
		return nil, fmt.Errorf("proxy: configuration was not validated (publisher.origin_url not parsed)")
	}
	g := &Guest{
		origin:         cfg.Publisher.Origin,
		originHost:     cfg.Publisher.OriginHost,
		hostOverride:   cfg.Publisher.OriginHostHeaderOverride,
		slots:          cfg.CreativeOpportunities.Slots,
		auctionEnabled: cfg.Auction.Enabled,
		auctionTimeout: time.Duration(cfg.Auction.TimeoutMS) * time.Millisecond,
		codecOpts: compress.Options{
			GzipLevel:     cfg.Compression.GzipLevel,
			BrotliQuality: cfg.Compression.BrotliQuality,
			BrotliWindow:  cfg.Compression.BrotliWindow,
		},
		platform:      cfg.Platform.DeliveryCompression,
		offloadAE:     cfg.Publisher.OffloadOriginAcceptEncoding,
		rawLimit:      cfg.Publisher.MaxOriginResponseBytes,
		decodedLimit:  cfg.Publisher.MaxDecodedBodyBytes,
		idleTimeout:   cfg.Publisher.OriginIdleTimeout.Duration,
		flushLatency:  o.FlushLatency,
		diagnostics:   cfg.Debug.DiagnosticsHeaders,
		allowOverride: cfg.Debug.AllowModeOverride,
		log:           o.Logger,
		metrics:       o.Metrics,
	}
	g.offload = cfg.Publisher.SSATCompressionOffloadEnabled && g.platform != config.DeliveryCompressionUnavailable
	if g.flushLatency <= 0 {
		g.flushLatency = 50 * time.Millisecond
	}
	if g.log == nil {
		g.log = zap.NewNop()
	}
	if g.metrics == nil {
		g.metrics = NewMetrics()
	}
	g.hosts = hostPolicy{domain: strings.ToLower(cfg.Publisher.Domain), trusted: cfg.Server.TrustedPrefixes}
	g.hosts.allowed = append(g.hosts.allowed, g.hosts.domain)
	for _, h := range cfg.Publisher.AllowedHosts {
		g.hosts.allowed = append(g.hosts.allowed, strings.ToLower(h))
	}
	for _, b := range cfg.Bots.UserAgents {
		if b = strings.ToLower(strings.TrimSpace(b)); b != "" {
			g.bots = append(g.bots, b)
		}
	}
	sum := sha256.Sum256(o.Bundle)
	g.bundle = o.Bundle
	g.bundleHash = hex.EncodeToString(sum[:])
	g.bundleTag = rewrite.BundleTag(g.bundleHash)
	g.provider = o.Provider
	if g.provider == nil {
		g.provider = providerFromConfig(cfg, g.log)
	}
	if s, ok := g.provider.(interface{ Stats() *auction.Stats }); ok {
		g.metrics.auction = s.Stats()
	}
	g.needPurpose1 = cfg.Consent.RequireTCFPurpose1
	transport := o.Transport
	if transport == nil {
		transport = newOriginTransport(cfg)
	}
	g.rp = &httputil.ReverseProxy{
		Rewrite:        g.rewriteOriginRequest,
		Transport:      transport,
		ModifyResponse: g.modifyResponse,
		ErrorHandler:   g.errorHandler,
		// The pipeline already batches its output by latency; pass-through
		// bodies are forwarded as they arrive (spec: streaming everywhere).
		FlushInterval: -1,
		ErrorLog:      zap.NewStdLog(g.log.Named("reverseproxy")),
	}
	return g, nil
}

// newOriginTransport builds the only transport page traffic uses. It never
// decodes bodies itself (spec §2, Go pitfall): the guest sets
// Accept-Encoding on every origin request and decodes what it asked for.
func newOriginTransport(cfg *config.Config) *http.Transport {
	dialer := &net.Dialer{Timeout: cfg.Publisher.OriginConnectTimeout.Duration, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 nil, // the origin is contacted directly, never through HTTP_PROXY
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   cfg.Publisher.OriginConnectTimeout.Duration,
		ResponseHeaderTimeout: cfg.Publisher.OriginHeaderTimeout.Duration,
		DisableCompression:    true,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   128,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Close releases the guest's idle origin connections. In-flight requests
// are not affected; call it after the server has shut down.
func (g *Guest) Close() {
	if t, ok := g.rp.Transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
	if p, ok := g.provider.(interface{ Close() }); ok {
		p.Close()
	}
}

// Metrics returns the guest's counters.
func (g *Guest) Metrics() *Metrics { return g.metrics }

type exchangeKey struct{}

// exchange is the state of one client request as it crosses the guest.
type exchange struct {
	start      time.Time
	view       clientView
	eligible   bool
	ineligible string
	slots      []ssat.Slot
	auction    *auction.Call
	mode       mode
	originAE   string
	ctx        context.Context
	cancel     context.CancelCauseFunc

	// Filled in as the response is handled. The pipeline goroutine writes
	// the fields below mu; done is closed when it has finished.
	route          route
	originCoding   string
	outCoding      string
	status         int
	mu             sync.Mutex
	done           chan struct{}
	originBytes    int64
	outBytes       int64 // encoded bytes sent for the body
	processedBytes int64 // rewritten bytes before encoding
	guestTime      time.Duration
	outcome        string
	reason         string
	err            error
	auctionOut     auction.Outcome
	passBody       *originBody // the body of a pass-through response
	pipe           *io.PipeReader
}

func (x *exchange) fail(reason string, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.reason == "" {
		x.reason, x.err = reason, err
	}
}

// ServeHTTP handles one client request.
func (g *Guest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{start: time.Now(), view: g.hosts.view(r)}
	if r.Method == http.MethodConnect {
		// A CONNECT would ask us to tunnel somewhere: ssatd is not a
		// forward proxy (RFC 9110 §9.3.6 lets a server refuse it).
		x.route, x.status, x.reason = routeRejected, http.StatusMethodNotAllowed, "connect_refused"
		w.Header().Set("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
		http.Error(w, "CONNECT is not supported", http.StatusMethodNotAllowed)
		g.logExchange(r, x)
		return
	}
	if len(r.TransferEncoding) > 0 {
		// A request body delimited by Transfer-Encoding is refused (RFC 9112
		// §6.3 allows 411): net/http silently drops a Content-Length sent
		// alongside it, and a front proxy that honoured that Content-Length
		// would frame the stream differently (request smuggling). Browsers
		// and form posts send Content-Length.
		x.route, x.status, x.reason = routeRejected, http.StatusLengthRequired, "request_transfer_encoding"
		w.Header().Set("Connection", "close")
		http.Error(w, "411 Length Required: request bodies must carry a Content-Length", http.StatusLengthRequired)
		g.logExchange(r, x)
		return
	}
	if isBundleRequest(r) {
		x.route, x.status = routeBundle, http.StatusOK
		g.serveBundle(w, r)
		g.logExchange(r, x)
		return
	}
	g.prepare(x, r)
	cancel := x.cancel
	defer func() {
		// Stop the origin fetch and the pipeline before logging, so the log
		// line is final and nothing outlives the request.
		cancel(errRequestDone)
		if x.pipe != nil {
			// Normally ReverseProxy has closed it already; if a panic cut
			// the copy short, this unblocks a pipeline waiting to write.
			x.pipe.CloseWithError(errRequestDone)
		}
		if x.done != nil {
			<-x.done
		}
		if x.auction != nil {
			x.auction.Stop()
		}
		p := recover()
		if p != nil && x.outcome == "" {
			// ReverseProxy aborts when copying a body fails: name which
			// side failed.
			x.outcome = outcomeAborted
			if x.reason == "" {
				switch {
				case errors.Is(causeOf(x), errOriginIdle):
					x.reason = reasonOriginIdle
				case r.Context().Err() != nil:
					x.reason = reasonClientGone
				default:
					x.reason = reasonOriginFailed
				}
			}
		}
		g.logExchange(r, x)
		if p != nil {
			panic(p)
		}
	}()
	g.rp.ServeHTTP(w, r.WithContext(context.WithValue(x.ctx, exchangeKey{}, x)))
}

// prepare decides eligibility, mode and slots, and starts the auction: all
// that is known from the request alone (§1, §4.3: the auction runs
// concurrently with the origin fetch).
func (g *Guest) prepare(x *exchange, r *http.Request) {
	x.ineligible = g.eligibility(r)
	var consentString string
	if x.ineligible == ineligibleNone {
		x.slots = g.matchSlots(r.URL.Path)
		var purpose1 bool
		consentString, purpose1 = consent(r)
		switch {
		case len(x.slots) == 0:
			x.ineligible = ineligibleNoSlot
		case g.needPurpose1 && !purpose1:
			x.ineligible = ineligibleConsent
		}
	}
	x.eligible = x.ineligible == ineligibleNone
	x.mode = g.modeFor(x, r)
	x.ctx, x.cancel = context.WithCancelCause(r.Context())
	if x.eligible {
		x.auction = auction.Start(x.ctx, g.provider, g.auctionRequest(x, r, consentString), g.auctionTimeout)
	}
}

func exchangeOf(r *http.Request) *exchange {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	return x
}

func (g *Guest) matchSlots(path string) []ssat.Slot {
	var out []ssat.Slot
	for i := range g.slots {
		s := &g.slots[i]
		if !s.Matches(path) {
			continue
		}
		div := s.DivID
		if div == "" {
			div = s.ID
		}
		out = append(out, ssat.Slot{DivID: div, Formats: s.Formats, GAMUnitPath: s.GAMUnitPath, ID: s.ID, Targeting: s.Targeting,
			Bidders: s.BidderParams})
	}
	return out
}
