package auction

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/ssat"
	"github.com/ssatd/ssatd/internal/telemetry"
)

// DefaultMaxBody caps an endpoint's answer. A bid response for a handful of
// slots is a few KiB; anything this large is a broken or hostile endpoint.
const DefaultMaxBody = 1 << 20

// Endpoint is one OpenRTB endpoint, such as a Prebid Server
// /openrtb2/auction URL.
type Endpoint struct {
	Name      string // label for logs and metrics
	URL       string
	Timeout   time.Duration // 0: bounded by the auction deadline alone
	AccountID string        // site.publisher.id
	Test      bool
	Headers   map[string]string // extra request headers
	// Debug sets ext.prebid.debug and returnallbidstatus, as Trusted
	// Server's integrations.prebid.debug does
	// (IABTechLab/trusted-server crates/trusted-server-core/src/
	// integrations/prebid.rs:1954-1960).
	Debug bool
}

// OpenRTBOptions configure an OpenRTB provider.
type OpenRTBOptions struct {
	Endpoints   []Endpoint
	Currency    string // ISO-4217; "" is USD
	Granularity Granularity
	// GDPRApplies is sent as regs.gdpr (1 or 0).
	GDPRApplies bool
	// Transport overrides the endpoint transport (tests); nil builds a
	// dedicated one with NewTransport.
	Transport http.RoundTripper
	// ConnectTimeout bounds dialing and the TLS handshake of new endpoint
	// connections when Transport is nil.
	ConnectTimeout time.Duration
	Logger         *zap.Logger
	Stats          *Stats
	MaxBody        int64  // 0 is DefaultMaxBody
	UserAgent      string // sent as User-Agent; never the client's
	// TrustedServer, when set, is ext.trusted_server for a bid request,
	// given its id and site.domain: the request's Ed25519 signature
	// (internal/signing).
	TrustedServer func(id, host string) *openrtb.TrustedServerExt
}

// OpenRTB calls every endpoint concurrently with one OpenRTB 2.6 bid request
// each, and keeps the highest price per slot across all answers.
type OpenRTB struct {
	o      OpenRTBOptions
	client *http.Client
}

// NewOpenRTB builds the provider.
func NewOpenRTB(o OpenRTBOptions) *OpenRTB {
	if o.Currency == "" {
		o.Currency = "USD"
	}
	if o.Granularity.buckets == nil {
		o.Granularity, _ = ParseGranularity(DefaultGranularity) // a name of the list
	}
	if o.Transport == nil {
		o.Transport = NewTransport(o.ConnectTimeout)
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Stats == nil {
		o.Stats = NewStats()
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.UserAgent == "" {
		o.UserAgent = "ssatd"
	}
	return &OpenRTB{o: o, client: &http.Client{
		Transport: o.Transport,
		// A bid endpoint has no business redirecting; following one would
		// resend the request body somewhere the operator did not configure.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// NewTransport is the transport for bid endpoints only, separate from the
// origin's: its own pool of keep-alive connections, and dial and TLS
// timeouts of its own (the auction deadline bounds every request anyway).
func NewTransport(connectTimeout time.Duration) *http.Transport {
	if connectTimeout <= 0 {
		connectTimeout = time.Second
	}
	dialer := &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                  nil, // endpoints are contacted directly, as the origin is
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    connectTimeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// Stats returns the provider's counters.
func (p *OpenRTB) Stats() *Stats { return p.o.Stats }

// Close releases idle endpoint connections.
func (p *OpenRTB) Close() { p.client.CloseIdleConnections() }

// errNoAnswer: no endpoint gave a usable answer.
var errNoAnswer = errors.New("no endpoint gave a usable answer")

// Bids runs the auction to the end of ctx or of the last answer. It fails
// when no endpoint gave a usable answer (bids or a valid no-bid).
func (p *OpenRTB) Bids(ctx context.Context, req Request) (map[string]ssat.Bid, error) {
	pr := p.BidsPartial(ctx, req, nil)
	if pr.Answered == 0 && pr.Sources > 0 {
		return pr.Bids, fmt.Errorf("%w: %d failed, %d timed out, %d cancelled", errNoAnswer, pr.Failed, pr.TimedOut, pr.Cancelled)
	}
	return pr.Bids, nil
}

func (p *OpenRTB) sources(req Request) int {
	if len(req.Slots) == 0 {
		return 0
	}
	return len(p.o.Endpoints)
}

// candidate is a usable bid with what decides between equal prices: the
// endpoint's position in the configuration, then the bid's position in the
// answer, so the winner never depends on which answer arrived first.
type candidate struct {
	price    *big.Rat
	endpoint int
	pos      int
	slot     string
	bid      ssat.Bid
}

func (c candidate) beats(o candidate) bool {
	if n := c.price.Cmp(o.price); n != 0 {
		return n > 0
	}
	if c.endpoint != o.endpoint {
		return c.endpoint < o.endpoint
	}
	return c.pos < o.pos
}

// BidsPartial runs the auction, calling offer with its progress (the best
// bids so far and how the endpoints have ended) each time an endpoint call
// ends, so that a deadline keeps what has arrived. It returns when every
// call has ended.
func (p *OpenRTB) BidsPartial(ctx context.Context, req Request, offer func(Progress)) Progress {
	prog := Progress{Bids: map[string]ssat.Bid{}, Tally: Tally{Sources: p.sources(req)}}
	if prog.Sources == 0 {
		return prog
	}
	type ended struct {
		cands   []candidate
		outcome string
	}
	answers := make(chan ended, prog.Sources)
	var wg sync.WaitGroup
	for i := range p.o.Endpoints {
		wg.Go(func() {
			cands, outcome := p.call(ctx, i, req)
			answers <- ended{cands, outcome}
		})
	}
	best := map[string]candidate{}
	for range prog.Sources {
		a := <-answers
		computing(ctx, func() {
			for _, c := range a.cands {
				if cur, ok := best[c.slot]; !ok || c.beats(cur) {
					best[c.slot] = c
				}
			}
			prog.count(a.outcome)
			prog.Bids, prog.from = winners(best)
		})
		if offer != nil {
			offer(prog)
		}
	}
	wg.Wait()
	return prog
}

// count adds one endpoint call's outcome.
func (t *Tally) count(endpointOutcome string) {
	switch endpointOutcome {
	case EndpointBids, EndpointNoBid:
		t.Answered++
	case EndpointTimeout:
		t.TimedOut++
	case EndpointCancelled:
		t.Cancelled++
	default:
		t.Failed++
	}
}

// winners are the best bids per slot, and the endpoint each came from.
func winners(best map[string]candidate) (map[string]ssat.Bid, map[string]int) {
	out := make(map[string]ssat.Bid, len(best))
	from := make(map[string]int, len(best))
	for id, c := range best {
		out[id] = c.bid
		from[id] = c.endpoint
	}
	return out, from
}

// won counts the bids that reached a page, by endpoint and seat.
func (p *OpenRTB) won(pr Progress) {
	for slot, b := range pr.Bids {
		if i, ok := pr.from[slot]; ok {
			p.o.Stats.addWon(p.o.Endpoints[i].Name, b.HbBidder)
		}
	}
}

// result is how one endpoint call ended.
type result struct {
	outcome, reason string
	status          int
	err             error
}

// call sends one bid request and returns the usable bids of its answer and
// the call's outcome. It records exactly one outcome, and logs one line for
// each bad answer.
func (p *OpenRTB) call(ctx context.Context, i int, req Request) ([]candidate, string) {
	ep := p.o.Endpoints[i]
	// The span starts before the timeout's clock, so that a call that
	// timed out shows a span at least as long as its timeout.
	ctx, span := startEndpointSpan(ctx, ep.Name)
	start := time.Now()
	if ep.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ep.Timeout)
		defer cancel()
	}
	cands, res := p.exchange(ctx, i, req)
	endEndpointSpan(span, res, len(cands))
	p.o.Stats.observe(ep.Name, time.Since(start), res.outcome, res.reason)
	observe(ctx, EndpointResult{Endpoint: ep.Name, Outcome: res.outcome, Reason: res.reason, Status: res.status, Duration: time.Since(start)})
	fields := []zap.Field{zap.String("endpoint", ep.Name), zap.String("outcome", res.outcome),
		zap.String("reason", res.reason), zap.Duration("duration", time.Since(start))}
	if res.status != 0 {
		fields = append(fields, zap.Int("status", res.status))
	}
	if res.err != nil {
		// Bounded: encoding/json's error quotes a number of any length
		// from the endpoint's answer (telemetry.Error).
		fields = append(fields, telemetry.Error(res.err))
	}
	switch res.outcome {
	case EndpointError, EndpointTimeout:
		p.o.Logger.Warn("auction endpoint answered badly", fields...)
	case EndpointNoBid:
		if res.reason == ReasonNoContent {
			p.o.Logger.Info("auction endpoint has no bids", fields...)
		}
	}
	return cands, res.outcome
}

func (p *OpenRTB) exchange(ctx context.Context, i int, req Request) ([]candidate, result) {
	ep := p.o.Endpoints[i]
	var body []byte
	var err error
	computing(ctx, func() { body, err = json.Marshal(p.bidRequest(ctx, ep, req)) })
	if err != nil {
		return nil, result{outcome: EndpointError, reason: ReasonConnection, err: fmt.Errorf("encode bid request: %w", err)}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return nil, result{outcome: EndpointError, reason: ReasonConnection, err: err}
	}
	// Only these headers: nothing of the client's request (cookies,
	// referer, its own headers) leaves with the bid request.
	for k, v := range ep.Headers {
		hreq.Header.Set(k, v)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("X-Openrtb-Version", openrtb.Version)
	hreq.Header.Set("User-Agent", p.o.UserAgent)
	injectTraceparent(ctx, hreq.Header)
	resp, err := p.client.Do(hreq)
	if err != nil {
		return nil, p.failure(ctx, ReasonNoAnswer, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNoContent:
		// OpenRTB 2.6 §4.3: 204 is the no-bid answer.
		return nil, result{outcome: EndpointNoBid, reason: ReasonNoContent, status: resp.StatusCode}
	default:
		return nil, result{outcome: EndpointError, reason: ReasonStatus, status: resp.StatusCode}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, p.o.MaxBody+1))
	if err != nil {
		return nil, p.failure(ctx, ReasonSlowDrip, err)
	}
	if int64(len(data)) > p.o.MaxBody {
		return nil, result{outcome: EndpointError, reason: ReasonTooLarge, status: resp.StatusCode,
			err: fmt.Errorf("body over %d bytes", p.o.MaxBody)}
	}
	var cands []candidate
	var res result
	computing(ctx, func() { cands, res = p.decode(i, req, resp.StatusCode, data) })
	return cands, res
}

// decode reads an endpoint's 200 answer: its bids, or why it has none.
func (p *OpenRTB) decode(i int, req Request, status int, data []byte) ([]candidate, result) {
	var br openrtb.BidResponse
	if err := json.Unmarshal(data, &br); err != nil {
		return nil, result{outcome: EndpointError, reason: ReasonJSON, status: status, err: err}
	}
	cur := br.Cur
	if cur == "" {
		cur = "USD" // OpenRTB 2.6 §4.2.1: the default currency
	}
	if cur != p.o.Currency && len(br.SeatBid) > 0 {
		return nil, result{outcome: EndpointError, reason: ReasonCurrency, status: status,
			err: fmt.Errorf("bids in %q, configured currency %q", cur, p.o.Currency)}
	}
	cands := p.usable(i, req, br)
	if len(cands) == 0 {
		return nil, result{outcome: EndpointNoBid, reason: ReasonEmpty, status: status}
	}
	return cands, result{outcome: EndpointBids, status: status}
}

// failure classifies a failed send or read: when the deadline (the
// auction's or the endpoint's) has passed it is a timeout, when the page's
// request has ended it is a cancellation, otherwise a connection error.
func (p *OpenRTB) failure(ctx context.Context, timeoutReason string, err error) result {
	// The clock decides, not only ctx.Err: on a busy machine the page can
	// stop the auction after its deadline but before the deadline's timer
	// has fired, and that is still a timeout.
	dl, hasDL := ctx.Deadline()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), hasDL && !time.Now().Before(dl):
		return result{outcome: EndpointTimeout, reason: timeoutReason, err: err}
	case ctx.Err() != nil:
		return result{outcome: EndpointCancelled, err: err}
	}
	return result{outcome: EndpointError, reason: ReasonConnection, err: err}
}

// usable turns the answer's bids into candidates, counting those ignored.
func (p *OpenRTB) usable(i int, req Request, br openrtb.BidResponse) []candidate {
	slots := make(map[string]*ssat.Slot, len(req.Slots))
	for j := range req.Slots {
		slots[req.Slots[j].ID] = &req.Slots[j]
	}
	var out []candidate
	pos := 0
	for _, sb := range br.SeatBid {
		for _, b := range sb.Bid {
			pos++
			slot, ok := slots[b.ImpID]
			price, priceOK := ParsePrice(b.Price.String())
			reason := ""
			switch {
			case !ok:
				reason = IgnoredUnknownImpID
			case !priceOK || price.Sign() <= 0:
				reason = IgnoredPrice
			case b.AdM == "":
				reason = IgnoredNoAdm
			case b.ID == "":
				reason = IgnoredNoID
			}
			if reason != "" {
				p.o.Stats.addIgnored(reason)
				continue
			}
			w, h := b.W, b.H
			if (w <= 0 || h <= 0) && len(slot.Formats) > 0 && len(slot.Formats[0]) == 2 {
				w, h = slot.Formats[0][0], slot.Formats[0][1]
			}
			out = append(out, candidate{price: price, endpoint: i, pos: pos, slot: b.ImpID, bid: ssat.Bid{
				Adm: b.AdM, W: w, H: h, HbAdid: b.ID, HbBidder: sb.Seat, HbPb: p.o.Granularity.Bucket(price),
				Price: cpm(b.Price),
			}})
		}
	}
	return out
}

// cpm is an answer's price as a float64, as Trusted Server reads bid.price
// (serde's f64); one out of float64's range is 0.
func cpm(n json.Number) float64 {
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil {
		return 0
	}
	return f
}

// bidRequest builds the OpenRTB 2.6 request for one endpoint
// (docs/behaviour.md, "SSAT injection").
func (p *OpenRTB) bidRequest(ctx context.Context, ep Endpoint, req Request) *openrtb.BidRequest {
	br := &openrtb.BidRequest{
		ID:  newID(),
		Cur: []string{p.o.Currency},
		Site: &openrtb.Site{
			Page:      req.PageURL,
			Domain:    req.Domain,
			Publisher: &openrtb.Publisher{ID: ep.AccountID},
		},
		Device: &openrtb.Device{UA: req.UserAgent, Language: req.Language, Geo: req.Geo},
	}
	if req.IP.IsValid() {
		if req.IP.Is4() {
			br.Device.IP = req.IP.String()
		} else {
			br.Device.IPv6 = req.IP.String()
		}
	}
	if ep.Test {
		br.Test = 1
	}
	if ep.Debug {
		br.Ext = &openrtb.BidRequestExt{Prebid: &openrtb.BidRequestExtPrebid{Debug: true, ReturnAllBidStatus: true}}
	}
	if p.o.TrustedServer != nil {
		if br.Ext == nil {
			br.Ext = &openrtb.BidRequestExt{}
		}
		br.Ext.TrustedServer = p.o.TrustedServer(br.ID, req.Domain)
	}
	if req.Consent != "" || req.UserID != "" || len(req.EIDs) > 0 {
		br.User = &openrtb.User{ID: req.UserID, Consent: req.Consent}
		if len(req.EIDs) > 0 {
			br.User.Ext = &openrtb.UserExt{EIDs: req.EIDs}
		}
	}
	if req.RegsSet {
		br.Regs = req.Regs
	} else {
		gdpr := int8(0)
		if p.o.GDPRApplies {
			gdpr = 1
		}
		br.Regs = &openrtb.Regs{GDPR: &gdpr}
	}
	if dl, ok := ctx.Deadline(); ok {
		// The time actually left; at least 1ms, since 0 means "no limit".
		br.TMax = max(time.Until(dl).Milliseconds(), 1)
	}
	secure := int8(0)
	if req.Secure {
		secure = 1
	}
	for _, s := range req.Slots {
		imp := openrtb.Imp{ID: s.ID, TagID: s.GAMUnitPath, Secure: &secure, Banner: &openrtb.Banner{}}
		for _, f := range s.Formats {
			if len(f) == 2 {
				imp.Banner.Format = append(imp.Banner.Format, openrtb.Format{W: f[0], H: f[1]})
			}
		}
		if s.FloorPrice != nil {
			// As upstream: the slot's floor_price in USD
			// (IABTechLab/trusted-server crates/trusted-server-core/src/
			// integrations/prebid.rs:1794-1798).
			imp.BidFloor, imp.BidFloorCur = s.FloorPrice, "USD"
		}
		if len(s.Bidders) > 0 {
			imp.Ext = &openrtb.ImpExt{Prebid: &openrtb.ImpExtPrebid{Bidder: s.Bidders}}
		}
		br.Imp = append(br.Imp, imp)
	}
	return br
}

// newID is a fresh random request id (128 bits, hex).
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
