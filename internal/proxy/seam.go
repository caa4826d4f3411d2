package proxy

import (
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/auction"
	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/ssat"
)

// guestSeam is the guest as route families see it (family.Seam): each
// method finds the request's exchange, which the route table opened
// (routes.go), and acts on it with the guest's own code, so that a family
// decides nothing twice. Outside a routed request it does nothing.
type guestSeam struct{ g *Guest }

var _ family.Seam = guestSeam{}

func (s guestSeam) View(r *http.Request) family.View {
	x := exchangeOf(r)
	if x == nil {
		return family.View{}
	}
	return family.View{Host: x.view.host, Scheme: x.view.scheme, ClientIP: x.view.ip}
}

func (s guestSeam) Refuse(w http.ResponseWriter, r *http.Request, a family.Answer, err error) {
	if x := exchangeOf(r); x != nil {
		s.g.recordFailure(x, outcomeOK, a.Reason, err)
	}
	a.Write(w)
}

func (s guestSeam) Ineligible(r *http.Request, why string) {
	if x := exchangeOf(r); x != nil {
		x.ineligible = why
	}
}

func (s guestSeam) Consent(r *http.Request) privacy.Decision {
	x := exchangeOf(r)
	if x == nil {
		return privacy.Decision{}
	}
	return s.g.decideConsent(x, r)
}

func (s guestSeam) Slots(path string) []ssat.Slot { return s.g.matchSlots(path) }

func (s guestSeam) IsBot(userAgent string) bool { return s.g.isBot(userAgent) }

func (s guestSeam) Logger() *zap.Logger { return s.g.log }

// Auction is what a page's auction may know of the client (auctionRequest)
// for the page c.PageURL, run under c.Timeout, its creatives processed for
// c.Render (creatives). auction.Call's Stop cancels the provider's call and
// waits for it, so it does not outlive r.
func (s guestSeam) Auction(r *http.Request, c family.AuctionCall) (map[string]ssat.Bid, time.Duration) {
	x := exchangeOf(r)
	if x == nil {
		return map[string]ssat.Bid{}, 0
	}
	x.slots, x.eligible = c.Slots, true
	req := s.g.auctionRequest(x, r, c.Consent)
	req.PageURL = c.PageURL
	if u, err := url.Parse(c.PageURL); err == nil {
		req.Path = u.Path
	}
	x.auctionStart = time.Now()
	call := auction.Start(r.Context(), s.g.provider, req, c.Timeout)
	bids, out := call.Wait(r.Context())
	call.Stop()
	x.auctionOut, x.auctionTook = out, time.Since(x.auctionStart)
	return s.g.creatives.process(bids, c.Render, x.view), x.auctionTook
}
