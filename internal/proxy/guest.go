// Package proxy is the guest of "Guest and edge" in docs/behaviour.md: the SSAT handler that fetches the
// publisher origin's page, decides whether it is eligible, classifies the
// response, rewrites HTML while it streams and applies the header policy.
//
// It is built on net/http/httputil.ReverseProxy. Each decision lives in one
// place: the requests refused before any origin request in refusals.go,
// which route family serves which path in the route table (routes.go, the
// families reaching the guest through internal/family, seam.go),
// eligibility and slots in eligibility.go, the compression mode in mode.go
// (a response that does not go through the pipeline falls back to mirror
// in passThrough), the origin request in origin.go, the whole page for a
// ranged request in ranges.go, response classification and the reading of
// Content-Encoding in classify.go, the output coding in pipeline.go
// (outputCoding), the header policy in headers.go and respheaders.go, the
// page's body (decode, rewrite, encode and its limits) in internal/pipeline,
// which pipeline.go runs for a served page and records into the exchange,
// admission to the pipeline in admission.go, and why a request failed, with what the
// client is then told, in errors.go (failureOf). The failure reasons are a
// closed set (internal/family, under the guest's names in reasons.go) that
// only recordFailure writes to the access line and the failures metric.
//
// A request's work ends with it: the handler cancels the origin fetch,
// waits for the pipeline and stops the auction before the access line is
// written (Guest.end).
package proxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/csp"
	"github.com/ssatd/ssatd/internal/firstparty"
	"github.com/ssatd/ssatd/internal/identity"
	"github.com/ssatd/ssatd/internal/metrics"
	bodypipe "github.com/ssatd/ssatd/internal/pipeline"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
	"github.com/ssatd/ssatd/internal/store"
	"github.com/ssatd/ssatd/internal/telemetry"
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
	// Metrics records every request; nil allocates a private set.
	Metrics *metrics.Set
	// AuctionStats, when set, receives the OpenRTB provider's counters
	// and is registered by the caller, not by New: guests built one after
	// another from reloaded configurations then add to one set of
	// per-endpoint figures. Nil gives the provider its own, registered on
	// Metrics.
	AuctionStats *auction.Stats
	// FlushLatency bounds how long rewritten bytes may wait in buffers
	// before they are pushed to the client; 0 means 50ms.
	FlushLatency time.Duration
	// Store keeps edge-cookie identities (internal/identity); nil: none,
	// so no edge cookie is minted. The caller opens and closes it.
	Store store.Store
	// StoreFailed, if set, is called for each store call that failed.
	StoreFailed func()
}

// Guest is the SSAT handler. Every field is set by New and only read
// afterwards, which is what makes a Guest safe for concurrent use. The
// fields are grouped by the decision they serve.
type Guest struct {
	originOptions
	pageOptions
	limitOptions
	codecOptions
	debugOptions
	computeOptions
	identityOptions
	log     *zap.Logger
	metrics *metrics.Set
	rp      *httputil.ReverseProxy
	// routes is the client side's route table (routes.go).
	routes http.Handler
	// firstParty serves /first-party/* (nil without publisher.proxy_secret);
	// creatives makes winning creatives first party (firstparty.go).
	firstParty *firstparty.Family
	creatives  creatives
	// identity is the edge-cookie family (internal/identity), which the
	// page path calls once per origin response (modifyResponse); nil
	// without ec.passphrase.
	identity *identity.Family
	// cdnLoop is this guest's own CDN-Loop entry (RFC 8586), added to
	// every origin request; a request that already carries it has looped.
	cdnLoop string
	// textTypes and inline: publisher.rewrite_content_types and
	// publisher.rewrite_inline (docs/behaviour.md, "Text responses").
	textTypes textTypes
	inline    bool
}

// originOptions say where pages come from and how they are asked for
// (docs/behaviour.md, "Origin request").
type originOptions struct {
	origin       *url.URL
	originHost   string // host[:port] of origin; links naming it are rewritten
	hostOverride string // the Host sent to the origin; "" sends the origin's own
}

// pageOptions decide which requests are SSAT-eligible and what their pages
// get (docs/behaviour.md, "Eligibility", "Bundle tag", "SSAT injection").
type pageOptions struct {
	hosts          hostPolicy
	bots           []string // lower-case User-Agent substrings
	slots          []config.Slot
	auctionEnabled bool
	auctionTimeout time.Duration
	provider       auction.Provider
	consent        privacy.Options
	// headTags follow the ad-slots script after <head> (clientBundle).
	headTags     []byte
	cacheControl string // publisher.ssat_cache_control
	// ignoreCSP leaves pages' policies unread (csp.go): only the tests set
	// it, for the control that shows what a page got before.
	ignoreCSP bool
	// headScripts caches headPrepend's script per matched slot set
	// (string key → []byte, never modified once stored).
	headScripts  *sync.Map
	headScriptsN *atomic.Int64
}

// limitOptions bound one request's origin body and the waits for it
// (docs/behaviour.md, "Limits").
type limitOptions struct {
	rawLimit     int64 // origin body bytes as sent, any coding
	decodedLimit int64 // origin body bytes after decoding
	idleTimeout  time.Duration
	pages        *pageGate // server.max_concurrent_pages, shared by all requests
	requests     *pageGate // server.max_requests_in_progress
	// One client's share of each (clientshare.go).
	clientPages    *clientShares
	clientRequests *clientShares
}

// codecOptions decide how a page is encoded and delivered
// (docs/behaviour.md, "Compression").
type codecOptions struct {
	// encoders start the page's encoder; compression's settings were
	// checked when they were built (New), not per response.
	encoders compress.Encoders
	// platform is platform.delivery_compression; canHint is decided from it
	// once, here: whether something in front compresses responses that
	// carry the hint (docs/behaviour.md, "Platforms"). Offload, the hint
	// header and the bundle's hint all follow canHint.
	platform     string
	canHint      bool
	offload      bool   // offload is enabled and canHint (docs/behaviour.md, "Offload mode")
	offloadAE    string // "identity" or "negotiate"
	flushLatency time.Duration
}

// debugOptions are the debug settings that change what a response carries.
type debugOptions struct {
	diagnostics   bool
	allowOverride bool
}

// New builds a Guest from a validated configuration.
func New(cfg *config.Config, o Options) (*Guest, error) {
	if cfg.Publisher.Origin == nil {
		return nil, fmt.Errorf("proxy: configuration was not validated (publisher.origin_url not parsed)")
	}
	if cfg.Server.MaxConcurrentPages < 1 {
		return nil, fmt.Errorf("proxy: server.max_concurrent_pages must be at least 1, got %d", cfg.Server.MaxConcurrentPages)
	}
	cb, err := bundleOf(cfg, o.Bundle)
	if err != nil {
		return nil, err
	}
	codecs, err := newCodecOptions(cfg, o.FlushLatency)
	if err != nil {
		return nil, err
	}
	g := &Guest{
		originOptions: originOptions{
			origin:       cfg.Publisher.Origin,
			originHost:   cfg.Publisher.OriginHost,
			hostOverride: cfg.Publisher.OriginHostHeaderOverride,
		},
		pageOptions: newPageOptions(cfg, cb.headTags),
		limitOptions: limitOptions{
			rawLimit:       cfg.Publisher.MaxOriginResponseBytes,
			decodedLimit:   cfg.Publisher.MaxDecodedBodyBytes,
			idleTimeout:    cfg.Publisher.OriginIdleTimeout.Duration,
			pages:          newPageGate(cfg.Server.MaxConcurrentPages, cfg.Server.PageQueueTimeout.Duration),
			requests:       newRequestGate(cfg.Server.RequestBound(), cfg.Server.PageQueueTimeout.Duration),
			clientPages:    newClientShares(cfg.Server.MaxConcurrentPages, cfg.Server.PageQueueTimeout.Duration, "pages"),
			clientRequests: newClientShares(cfg.Server.RequestBound(), cfg.Server.PageQueueTimeout.Duration, "requests"),
		},
		codecOptions: codecs,
		debugOptions: debugOptions{
			diagnostics:   cfg.Debug.DiagnosticsHeaders,
			allowOverride: cfg.Debug.AllowModeOverride,
		},
		computeOptions: computeOptionsOf(&cfg.Compute),
		log:            o.Logger,
		metrics:        o.Metrics,
		cdnLoop:        newCDNLoopToken(),
		textTypes:      cfg.Publisher.RewriteContentTypes,
		inline:         cfg.Publisher.RewriteInline,
	}
	if g.log == nil {
		g.log = zap.NewNop()
	}
	if g.metrics == nil {
		g.metrics = metrics.New()
	}
	g.hosts = newHostPolicy(cfg.Publisher.Domain, cfg.Publisher.AllowedHosts, cfg.Server.TrustedPrefixes, cfg.Server.Listen)
	g.hosts.geo = geoOptionsOf(&cfg.Geo)
	if err := g.newIdentity(cfg); err != nil {
		return nil, err
	}
	g.provider = g.auctionProvider(cfg, o.Provider, o.AuctionStats)
	transport := o.Transport
	if transport == nil {
		transport = newOriginTransport(cfg)
	}
	if g.firstParty, err = g.newFirstParty(&cfg.FirstParty); err != nil {
		return nil, err
	}
	g.creatives = newCreatives(&cfg.FirstParty, g.firstParty, rewrite.UnifiedTag(), g.log.Named("creatives"))
	g.identity = identity.New(cfg, guestSeam{g}, o.Store, o.StoreFailed)
	cb.Hint = g.canHint
	g.routes = g.newRoutes(cfg, cb.Bundle)
	g.rp = &httputil.ReverseProxy{
		Rewrite:        g.rewriteOriginRequest,
		Transport:      wholePages{rt: tracedOrigin{rt: transport}},
		ModifyResponse: g.modifyResponse,
		ErrorHandler:   g.errorHandler,
		// The pipeline already batches its output by latency; pass-through
		// bodies are forwarded as they arrive, never held whole.
		FlushInterval: -1,
		BufferPool:    &copyBuffers{},
		ErrorLog:      telemetry.ErrorLog(g.log.Named("reverseproxy")),
	}
	return g, nil
}

// auctionProvider is p, or else the provider the configuration names, with
// its endpoint metrics registered on the guest's set.
func (g *Guest) auctionProvider(cfg *config.Config, p auction.Provider, stats *auction.Stats) auction.Provider {
	if p == nil {
		p = providerFromConfig(cfg, g.log, stats, g.signing.Signer())
	}
	if stats != nil {
		return p
	}
	if s, ok := p.(interface{ Stats() *auction.Stats }); ok {
		if err := g.metrics.Register(s.Stats()); err != nil {
			// Two guests on one metrics set (a test, the load tool) each
			// with an OpenRTB provider: the first one's figures are shown.
			g.log.Warn("auction endpoint metrics not registered", zap.Error(err))
		}
	}
	return p
}

// newPageOptions reads what eligible pages get from the configuration;
// the provider is New's.
func newPageOptions(cfg *config.Config, headTags []byte) pageOptions {
	p := pageOptions{
		slots:          cfg.CreativeOpportunities.Slots,
		auctionEnabled: cfg.Auction.Enabled,
		auctionTimeout: time.Duration(cfg.Auction.TimeoutMS) * time.Millisecond,
		consent:        consentOptions(&cfg.Consent),
		cacheControl:   cfg.Publisher.SSATCacheControl,
		headTags:       headTags,
		headScripts:    &sync.Map{},
		headScriptsN:   &atomic.Int64{},
	}
	for _, b := range cfg.Bots.UserAgents {
		if b = strings.ToLower(strings.TrimSpace(b)); b != "" {
			p.bots = append(p.bots, b)
		}
	}
	return p
}

// newCodecOptions reads the compression settings; flushLatency 0 means
// 50ms.
func newCodecOptions(cfg *config.Config, flushLatency time.Duration) (codecOptions, error) {
	canHint := cfg.Platform.DeliveryCompression != config.DeliveryCompressionUnavailable
	if flushLatency <= 0 {
		flushLatency = 50 * time.Millisecond
	}
	encoders, err := compress.NewEncoders(compress.Options{
		GzipLevel:     cfg.Compression.GzipLevel,
		BrotliQuality: cfg.Compression.BrotliQuality,
		BrotliWindow:  cfg.Compression.BrotliWindow,
	})
	if err != nil {
		return codecOptions{}, fmt.Errorf("proxy: compression: %w", err)
	}
	return codecOptions{
		encoders:     encoders,
		platform:     cfg.Platform.DeliveryCompression,
		canHint:      canHint,
		offload:      cfg.Publisher.SSATCompressionOffloadEnabled && canHint,
		offloadAE:    cfg.Publisher.OffloadOriginAcceptEncoding,
		flushLatency: flushLatency,
	}, nil
}

// newOriginTransport builds the only transport page traffic uses. It never
// decodes bodies itself (docs/behaviour.md, "Origin request", Go pitfall): the guest sets
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

// Close releases the guest's idle connections: the origin's, the bid
// endpoints' and the first-party proxy's. In-flight requests
// are not affected; call it after the server has shut down.
func (g *Guest) Close() {
	if t, ok := g.rp.Transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
	if p, ok := g.provider.(interface{ Close() }); ok {
		p.Close()
	}
	if g.firstParty != nil {
		g.firstParty.Close()
	}
}

// Metrics returns the guest's metrics.
func (g *Guest) Metrics() *metrics.Set { return g.metrics }

type exchangeKey struct{}

// exchange is the state of one client request as it crosses the guest. Its
// fields are grouped by who writes them, like httputil.ProxyRequest's In and
// Out: prepared before the origin request, handled as the response arrives,
// and results, which the pipeline goroutine writes while the handler runs.
type exchange struct {
	prepared
	handled
	results
}

// prepared is fixed when the request is prepared (ServeHTTP, prepare),
// before the origin request starts; read-only afterwards, from any goroutine.
type prepared struct {
	start      time.Time
	view       clientView
	eligible   bool
	ineligible string // why not, when !eligible
	// adPath: the auction is on and the path matches a slot, so some
	// request for this URL gets the page with ads. Every rewritten
	// response for it is then private, the ad-free variant included
	// (docs/behaviour.md, "Eligible pages").
	adPath  bool
	slots   []ssat.Slot
	auction *auction.Call
	diag    *diagRecorder   // with diagnostics on and an auction (diagnostics.go)
	ctx     context.Context // the origin request's; cancelled with a cause (errors.go)
	cancel  context.CancelCauseFunc
	// auctionStart is when the auction started; inFlightDone ends the
	// request's count in the in-flight gauge.
	auctionStart time.Time
	inFlightDone func()
	// queued is how long admitEarly waited for places: a page place taken
	// after classification waits only what is left of the queue timeout.
	queued time.Duration
	// client is who the request counts against in the clients' shares of
	// the gates (clientshare.go), set at admission.
	client netip.Prefix
	// mintedEC is the ts-ec id minted for this page before its auction
	// (identity.Family.Mint), which its response's cookie carries; "" if
	// none was.
	mintedEC string
}

// handled is written by the handler goroutine only: the mode in prepare,
// the origin's Accept-Encoding in rewriteOriginRequest, the rest as the
// response is classified (modifyResponse, errorHandler). All of it is
// written before the pipeline goroutine starts, which only reads it.
type handled struct {
	// mode is decided in prepare and falls back to mirror when the
	// response does not go through the pipeline (passThrough).
	mode         mode
	originAE     string
	route        route
	status       int // the origin's status, then the status sent; 0 until the origin answers
	originCoding string
	outCoding    string
	text         textKind       // the pipeline's rules: HTML, or a text type (textresp.go)
	passBody     bodypipe.Body  // the body of a pass-through response
	pageSlot     *pageSlot      // the page place taken before the origin fetch (admitEarly)
	runtime      *runtimeLimit  // compute.max_runtime's timer, nil without one (computelimits.go)
	pipe         *io.PipeReader // the pipeline's output, which ReverseProxy copies
	done         chan struct{}  // closed when the pipeline goroutine has finished
	firstByte    time.Time      // when the guest wrote the first body byte
	// csp is the page's policies as its header set them (csp.go), read
	// when cspOn; cspHeaderChanged: a header policy got the loader's hash.
	csp              csp.Page
	cspOn            bool
	cspHeaderChanged bool
	// front is the client's writer, which notes the status and bytes
	// written; the route table's handlers are given it as their writer.
	front *firstByteWriter
	// consent is the request's consent decision once consentDecided
	// (decideConsent).
	consent        privacy.Decision
	consentDecided bool
	// connecting: the origin transport is getting a connection
	// (connectTrace); set by the transport, read by failureOf.
	connecting atomic.Bool
}

// results are what the request came to, for the access log. They are
// guarded by mu: the pipeline goroutine writes them while the handler runs;
// the handler writes them without the lock only where no pipeline runs
// (before it starts, or after done).
type results struct {
	mu             sync.Mutex
	originBytes    int64
	outBytes       int64 // encoded bytes sent for the body
	processedBytes int64 // rewritten bytes before encoding
	guestTime      time.Duration
	guestCPU       time.Duration // native thread CPU of the pipeline (compute.go)
	cpuMeasured    bool
	auctionOut     auction.Outcome
	auctionTook    time.Duration
	outcome        string
	reason         reason // written by recordFailure only
	err            error
}

// copyErr is why ReverseProxy's copy of the body stopped: a pass-through
// body's read error, or else errCopyAborted (a pipeline's own failures are
// recorded before its pipe reports them).
func (x *exchange) copyErr() error {
	if x.passBody != nil && x.passBody.ReadErr() != nil {
		return x.passBody.ReadErr()
	}
	return errCopyAborted
}

// ServeHTTP handles one client request: the refusals of refusals.go, then
// the route table (routes.go), which hands anything no route family
// serves to servePage.
func (g *Guest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{prepared: prepared{start: time.Now(), view: g.hosts.view(r), inFlightDone: g.metrics.Started()}}
	x.front = &firstByteWriter{ResponseWriter: w, x: x}
	if g.refuse(x.front, r, x) || g.challenge(x.front, r, x) {
		return
	}
	g.stripOverflowCookie(r)
	g.routes.ServeHTTP(x.front, routed(r, x))
}

// servePage is the page path: the origin's response, proxied and, for an
// eligible page, rewritten with its auction.
func (g *Guest) servePage(_ http.ResponseWriter, r *http.Request) {
	x := exchangeOf(r)
	fw := x.front
	decision := g.prepare(x, r)
	defer g.end(r, x)
	defer g.startRuntimeLimit(x, fw)()
	// Shed before spending: admission comes before the auction and the
	// origin request (admission.go).
	release, err := g.admitEarly(x, r)
	defer release()
	if err != nil {
		g.answerError(fw, r, x, err)
		return
	}
	g.startAuction(x, r, decision)
	ignoreUpgrade(r)
	hw := &headerRewriter{ResponseWriter: fw, g: g, x: x, noInterim: !r.ProtoAtLeast(1, 1)}
	ctx := httptrace.WithClientTrace(context.WithValue(x.ctx, exchangeKey{}, x), x.connectTrace())
	g.rp.ServeHTTP(hw, r.WithContext(ctx))
	hw.dropTrailers()
}

// end, deferred by ServeHTTP, ends a proxied request: it cancels the
// origin fetch, waits for the pipeline goroutine, stops the auction
// (auction.Call.Stop), and only then writes the access line and the
// metrics, so that they are final. A panic of ReverseProxy (an aborted
// copy) is recorded and passed on.
func (g *Guest) end(r *http.Request, x *exchange) {
	p := recover()
	if p != nil {
		// ReverseProxy aborts when copying a body fails. Decide why now,
		// before cancelling the origin request makes every cause look like
		// a cancellation.
		err := x.copyErr()
		g.recordFailure(x, outcomeAborted, failureOf(x, err).reason, err)
	}
	x.cancel(errRequestDone)
	if x.pipe != nil {
		// Normally ReverseProxy has closed it already; if a panic cut the
		// copy short, this unblocks a pipeline waiting to write.
		x.pipe.CloseWithError(errRequestDone)
	}
	if x.done != nil {
		<-x.done
	}
	x.pageSlot.release() // a page place taken early whose response was no page
	if x.auction != nil {
		x.auction.Stop()
	}
	g.finish(r, x)
	if p != nil {
		panic(p)
	}
}

// prepare decides eligibility, mode and slots: all that is known from the
// request alone (docs/behaviour.md, "Eligibility"). It returns the privacy
// decision for startAuction.
func (g *Guest) prepare(x *exchange, r *http.Request) (decision privacy.Decision) {
	decision = g.decideEligibility(x, r)
	x.mode = g.modeFor(x, r)
	x.ctx, x.cancel = context.WithCancelCause(r.Context())
	return decision
}

// startAuction starts the auction of an eligible GET (docs/behaviour.md,
// "SSAT injection": the auction runs concurrently with the origin fetch).
func (g *Guest) startAuction(x *exchange, r *http.Request, decision privacy.Decision) {
	if x.eligible && r.Method == http.MethodGet {
		// A new reader's id exists before the auction, so the auction's
		// user.id is the id the page's cookie carries (identity.Mint).
		x.mintedEC = g.identity.Mint(r, decision)
		x.auctionStart = time.Now()
		x.auction = auction.Start(g.auctionContext(x), g.provider, g.auctionRequest(x, r, decision), g.auctionTimeout)
	}
}

func exchangeOf(r *http.Request) *exchange {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	return x
}
