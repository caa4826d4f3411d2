// Package tsjs is the route family of Trusted Server's client script
// (tsjs): the endpoints it calls back after the first view, POST /auction
// and GET /_ts/page-bids (docs/behaviour.md, "tsjs callbacks"), and the
// client bundle every rewritten page loads ("Bundle tag"). The guest
// answers them itself, never sending them to the origin.
//
// It reaches the guest only through family.Seam: the route table of
// internal/proxy (routes.go) says which methods and paths each handler
// serves, admits the callbacks, and writes their access lines.
package tsjs

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/hostport"
)

// The paths of tsjs's callbacks, upstream's:
// crates/trusted-server-adapter-axum/src/app.rs (named_routes) and
// crates/trusted-server-core/src/publisher.rs (PAGE_BIDS_PATH,
// PAGE_BIDS_LEGACY_PATH).
const (
	AuctionPath        = "/auction"
	PageBidsPath       = "/_ts/page-bids"
	PageBidsLegacyPath = "/__ts/page-bids"
)

// Bundle is the client bundle the family serves.
type Bundle struct {
	JS   []byte
	Hash string // bundle.Hash(JS), the ?v= that marks a URL immutable
	// User: JS is bundle.file, or made of bundle.dir's modules, served
	// with upstream's headers (userbundle.go) instead of ssatd's.
	User bool
	// Deferred are the modules of bundle.dir that pages load on their own
	// URLs, by id (upstream's deferred modules: prebid's).
	Deferred map[string]Module
	// Hint: something in front compresses responses carrying the hint
	// header (docs/behaviour.md, "Platforms"), so the bundle carries it.
	Hint bool
}

// Module is one module served alone.
type Module struct {
	JS   []byte
	Hash string // bundle.Hash(JS)
}

// Family serves tsjs's routes. Its handlers are safe for concurrent use.
type Family struct {
	seam           family.Seam
	bundle         Bundle
	auctionEnabled bool
	haveSlots      bool // creative_opportunities has slots
	// auctionTimeout is the page's deadline, which page-bids uses;
	// postAuctionTimeout is POST /auction's.
	auctionTimeout     time.Duration
	postAuctionTimeout time.Duration
}

// New builds the family from a validated configuration.
func New(cfg *config.Config, s family.Seam, b Bundle) *Family {
	return &Family{
		seam:               s,
		bundle:             b,
		auctionEnabled:     cfg.Auction.Enabled,
		haveSlots:          len(cfg.CreativeOpportunities.Slots) > 0,
		auctionTimeout:     time.Duration(cfg.Auction.TimeoutMS) * time.Millisecond,
		postAuctionTimeout: time.Duration(cmp.Or(cfg.Auction.PostAuctionTimeoutMS, cfg.Auction.TimeoutMS)) * time.Millisecond,
	}
}

// Auction answers POST /auction; any other method is answered 405.
func (f *Family) Auction() http.Handler { return http.HandlerFunc(f.serveAuction) }

// PageBids answers GET and OPTIONS on /_ts/page-bids and its deprecated
// alias; the route table sends other methods to the origin, as upstream
// does.
func (f *Family) PageBids() http.Handler { return http.HandlerFunc(f.servePageBids) }

// Bundle answers GET and HEAD of every path under rewrite.StaticPrefix:
// the client bundle, the deferred modules, and 404 for any other name.
func (f *Family) Bundle() http.Handler { return http.HandlerFunc(f.serveBundle) }

// refuse answers a refused callback with a plain-text reason, never
// stored, logged as a refusal of client input and not counted as a
// failure.
func (f *Family) refuse(w http.ResponseWriter, r *http.Request, status int, why family.Reason, msg string, err error) {
	f.seam.Refuse(w, r, family.Answer{Status: status, Reason: why, Msg: msg, Policy: family.NoStorePrivate}, err)
}

// callbackPageURL is the page a POST /auction bids for: its Referer when
// that is an http(s) URL on the host the client used, without credentials,
// query or fragment, else the site's root. This is upstream's
// sanitize_publisher_page_url (auction/formats.rs), keyed on the request's
// host (ssatd may serve several) instead of publisher.domain alone: the
// query can carry private data and must not reach bidders.
func callbackPageURL(r *http.Request, v family.View) string {
	root := v.Scheme + "://" + v.Host + "/"
	ref := r.Header.Get("Referer")
	if ref == "" || len(ref) > 8192 {
		return root
	}
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || !sameHostName(u.Host, v.Host) {
		return root
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}

// sameHostName compares two host[:port] values by host name only.
func sameHostName(a, b string) bool {
	return hostport.SameName(a, b)
}

// writeJSON sends v as a 200 application/json answer.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only maps of strings and numbers are encoded here.
		family.Answer{Status: http.StatusInternalServerError, Msg: "internal error", Policy: family.NoStorePrivate}.Write(w)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
