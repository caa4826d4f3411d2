package proxy

import (
	"net/http"
	"net/netip"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/config"
	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/hostport"
	"github.com/ssatd/ssatd/internal/ssat"
)

// providerFromConfig builds the auction provider named in the
// configuration. The OpenRTB provider gets its own transport, separate
// from the origin's; stats, when not nil, receives its counters.
func providerFromConfig(cfg *config.Config, log *zap.Logger, stats *auction.Stats) auction.Provider {
	a := &cfg.Auction
	switch a.Provider {
	case config.AuctionProviderStatic:
		by := make(map[string]ssat.Bid, len(a.StaticBids))
		for _, b := range a.StaticBids {
			by[b.SlotID] = ssat.Bid{Adm: b.Adm, H: b.H, HbAdid: b.HbAdid, HbBidder: b.HbBidder, HbPb: b.HbPb, W: b.W}
		}
		return auction.Static{BySlot: by}
	case config.AuctionProviderOpenRTB:
		gran, err := auction.ParseGranularity(a.PriceGranularity)
		if err != nil {
			// Validate accepts only known names; keep the default if the
			// two lists ever drift.
			log.Error("price granularity", zap.Error(err))
		}
		eps := make([]auction.Endpoint, len(a.OpenRTB))
		for i, e := range a.OpenRTB {
			eps[i] = auction.Endpoint{Name: e.Name, URL: e.URL, Timeout: time.Duration(e.TimeoutMS) * time.Millisecond,
				AccountID: e.AccountID, Test: e.Test, Headers: e.Headers, Debug: e.Debug}
		}
		return auction.NewOpenRTB(auction.OpenRTBOptions{
			Endpoints:      eps,
			Currency:       a.Currency,
			Granularity:    gran,
			GDPRApplies:    cfg.Consent.GDPRApplies,
			ConnectTimeout: time.Duration(a.TimeoutMS) * time.Millisecond,
			Logger:         log.Named("auction"),
			Stats:          stats,
		})
	}
	return auction.None{}
}

// auctionRequest is what the auction may know of the client request: the
// page, the browser's User-Agent and language, its address and its consent
// decision. No cookie or other header is passed on.
func (g *Guest) auctionRequest(x *exchange, r *http.Request, d privacy.Decision) auction.Request {
	return auction.Request{
		Path:      r.URL.Path,
		Slots:     x.slots,
		PageURL:   x.view.scheme + "://" + x.view.host + g.publisherRequestURI(r.URL),
		Domain:    hostport.Name(x.view.host),
		Secure:    x.view.scheme == "https",
		UserAgent: r.UserAgent(),
		IP:        g.hosts.clientIP(r, x.view),
		Language:  language(r.Header.Get("Accept-Language")),
		Consent:   d.Consent,
		Regs:      d.Regs,
		RegsSet:   true,
		Geo:       g.geoFor(r, x.view),
	}
}

// clientIP is the peer address, or, when the peer is a trusted proxy, the
// nearest address in its forwarding chain that is not one (walking from
// the right, RFC 7239 §5.2), so that a client cannot choose its own.
func (hp *hostPolicy) clientIP(r *http.Request, v clientView) netip.Addr {
	if !v.trusted {
		return v.addr
	}
	hops := forwardedFor(r.Header)
	ip := v.addr
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := parseHop(hops[i])
		if err != nil {
			break
		}
		ip = a
		if !hp.isTrusted(a) {
			break
		}
	}
	return ip
}

// forwardedFor lists the for= values of Forwarded (RFC 7239 §4), or else
// the entries of X-Forwarded-For, first hop first.
func forwardedFor(h http.Header) []string {
	var hops []string
	for _, f := range h.Values("Forwarded") {
		for _, elem := range strings.Split(f, ",") {
			if v, ok := forwardedParam(elem, "for"); ok {
				hops = append(hops, v)
			}
		}
	}
	if len(hops) > 0 {
		return hops
	}
	for _, f := range h.Values("X-Forwarded-For") {
		for _, e := range strings.Split(f, ",") {
			hops = append(hops, strings.TrimSpace(e))
		}
	}
	return hops
}

// parseHop reads "1.2.3.4", "1.2.3.4:80", "[2001:db8::1]:80" or "2001:db8::1".
func parseHop(s string) (netip.Addr, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), nil
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return a.Unmap(), err
}

// language is the primary subtag of the first language the client lists,
// when it is an ISO-639-1 code (OpenRTB device.language).
func language(acceptLanguage string) string {
	first, _, _ := strings.Cut(acceptLanguage, ",")
	first, _, _ = strings.Cut(first, ";")
	tag, _, _ := strings.Cut(strings.TrimSpace(first), "-")
	if len(tag) != 2 {
		return ""
	}
	tag = strings.ToLower(tag)
	if tag[0] < 'a' || tag[0] > 'z' || tag[1] < 'a' || tag[1] > 'z' {
		return ""
	}
	return tag
}
