package proxy

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/config"
	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/hostport"
	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/ssat"
)

// providerFromConfig builds the auction provider named in the
// configuration. The OpenRTB provider gets its own transport, separate
// from the origin's; stats, when not nil, receives its counters; signer
// writes each bid request's ext.trusted_server (signing.Family.Signer).
func providerFromConfig(cfg *config.Config, log *zap.Logger, stats *auction.Stats, signer func(id, host string) *openrtb.TrustedServerExt) auction.Provider {
	a := &cfg.Auction
	switch a.Provider {
	case config.AuctionProviderStatic:
		by := make(map[string]ssat.Bid, len(a.StaticBids))
		for _, b := range a.StaticBids {
			// A static bid's CPM, for ${AUCTION_PRICE}, is its hb_pb.
			price, err := strconv.ParseFloat(b.HbPb, 64)
			if err != nil || math.IsNaN(price) || math.IsInf(price, 0) {
				price = 0
			}
			by[b.SlotID] = ssat.Bid{Adm: b.Adm, H: b.H, HbAdid: b.HbAdid, HbBidder: b.HbBidder, HbPb: b.HbPb, W: b.W, Price: price}
		}
		return auction.Static{BySlot: by}
	case config.AuctionProviderOpenRTB:
		// Validate accepted only auction.GranularityNames, so the name
		// parses; the zero Granularity would be NewOpenRTB's default.
		gran, _ := auction.ParseGranularity(a.PriceGranularity)
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
			TrustedServer:  signer,
		})
	}
	return auction.None{}
}

// auctionRequest is what the auction may know of the client request: the
// page, the browser's User-Agent and language, its address and its consent
// decision, and, where consent allows, its edge cookie and partners' ids
// (internal/identity). No other cookie or header is passed on.
func (g *Guest) auctionRequest(x *exchange, r *http.Request, d privacy.Decision) auction.Request {
	userID, eids := g.identity.Bidstream(r, d, x.mintedEC)
	return auction.Request{
		Path:      r.URL.Path,
		Slots:     x.slots,
		PageURL:   x.view.scheme + "://" + x.view.host + g.publisherRequestURI(r.URL),
		Domain:    hostport.Name(x.view.host),
		Secure:    x.view.scheme == "https",
		UserAgent: r.UserAgent(),
		IP:        x.view.ip,
		Language:  language(r.Header.Get("Accept-Language")),
		Consent:   d.Consent,
		Regs:      d.Regs,
		RegsSet:   true,
		Geo:       x.view.geo,
		UserID:    userID,
		EIDs:      eids,
	}
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
