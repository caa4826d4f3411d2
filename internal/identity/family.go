package identity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/store"
)

// Paths of the partner routes (ec/identify.rs, ec/batch_sync.rs).
const (
	IdentifyPath  = "/_ts/api/v1/identify"
	BatchSyncPath = "/_ts/api/v1/batch-sync"
)

// storeTimeout bounds one request's store calls: a slow store costs a
// page little, and identity degrades instead.
const storeTimeout = time.Second

// Family is the edge-cookie family of one configuration.
type Family struct {
	seam       family.Seam
	passphrase string
	domain     string
	graph      *graph              // nil without a store
	partners   map[string]*partner // by the SHA-256 hex of the token
	all        []*partner
	log        *zap.Logger
	now        func() time.Time
	// storeFailed counts store calls that failed (ErrUnavailable), for
	// the store-failure metric.
	storeFailed func()
}

type partner struct {
	config.ECPartner
	limit *minuteLimiter
}

// New builds the family; nil when ec.passphrase is not set, as there is
// then no edge cookie. st may be nil (no store): then no cookie is minted,
// as upstream mints none without its KV graph (ec/finalize.rs:98-104).
// storeFailed, if set, is called for each store call that failed.
func New(cfg *config.Config, seam family.Seam, st store.Store, storeFailed func()) *Family {
	if cfg.EC.Passphrase == "" {
		return nil
	}
	f := &Family{seam: seam, passphrase: cfg.EC.Passphrase, domain: cfg.Publisher.Domain,
		partners: map[string]*partner{}, log: seam.Logger().Named("identity"), now: time.Now, storeFailed: storeFailed}
	if st != nil {
		f.graph = &graph{st: st, now: time.Now}
	}
	for _, p := range cfg.EC.Partners {
		pt := &partner{ECPartner: p, limit: newMinuteLimiter(p.BatchRateLimit, time.Now)}
		f.partners[tokenHash(p.APIToken)] = pt
		f.all = append(f.all, pt)
	}
	return f
}

// tokenHash is the SHA-256 hex of a bearer token; partners are found by
// it, never by the token (ec/partner.rs hash_api_key).
func tokenHash(token string) string {
	s := sha256.Sum256([]byte(token))
	return hex.EncodeToString(s[:])
}

// ecResponseHeaders are the identity headers a response loses when
// consent does not allow the edge cookie (ec/finalize.rs:22-27), besides
// one x-ts-<source_domain> per partner.
var ecResponseHeaders = []string{"X-Ts-Ec", "X-Ts-Eids", "X-Ts-Ec-Consent", "X-Ts-Eids-Truncated"}

// Page is the page path's one call into the family, made with the client's
// request and the origin response's headers before they are sent: it is
// upstream's generate_if_needed and ec_finalize_response (ec/mod.rs:
// 259-320, ec/finalize.rs:41-108). Without consent the identity headers go
// and, when the request withdraws consent explicitly, a ts-ec cookie it
// carried is expired and its entry tombstoned; a returning reader's
// cookie is left alone; a consenting browser's document navigation
// without one gets its cookie: for minted, the id Mint gave the request
// before its auction, else a new id, recorded in the store. A nil Family
// does nothing.
func (f *Family) Page(r *http.Request, h http.Header, minted string) {
	if f == nil {
		return
	}
	d := f.seam.Consent(r)
	raw := cookieID(cookieValues(r))
	if !d.EC.Allowed {
		f.stripHeaders(h)
		if d.EC.Withdrawn && raw != "" {
			h.Add("Set-Cookie", ExpireCookie(f.domain))
			f.withdraw(r.Context(), raw)
		}
		return
	}
	id := minted
	if id == "" {
		if id = f.Mint(r, d); id == "" {
			return
		}
	}
	h.Add("Set-Cookie", SetCookie(f.domain, id))
}

// Mint gives a consenting browser's document navigation that carries no
// valid ts-ec a new id, recorded in the store, and returns it; "" when none
// is minted. The page path calls it before the page's auction, so that the
// auction's user.id is the id the page's cookie will carry, as upstream
// mints in generate_if_needed before the ad stack runs (ec/mod.rs:259-320,
// publisher.rs). d is the request's consent decision.
func (f *Family) Mint(r *http.Request, d privacy.Decision) string {
	if f == nil || !d.EC.Allowed || Valid(cookieID(cookieValues(r))) || !f.mints(r) {
		return ""
	}
	ip := f.seam.View(r).ClientIP
	if !ip.IsValid() || f.graph == nil {
		return ""
	}
	id, err := Generate(f.passphrase, ip)
	if err != nil {
		f.log.Error("edge cookie not generated", zap.Error(err))
		return ""
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	now := f.now().Unix()
	e := entry{V: 1, Created: now, Consent: entryConsent{TCF: d.Consent, GPP: cookieValue(r, privacy.CookieGPP), OK: true, Updated: now},
		PubProperties: &pubProperties{OriginDomain: f.domain, SeenDomains: []string{f.domain}}}
	if err := f.graph.create(ctx, id, e); err != nil {
		// No entry, no cookie: a cookie without its entry would be an id
		// partners can never sync (ec/mod.rs:296-315).
		f.failed(err, "edge cookie not recorded; none set", id)
		return ""
	}
	return id
}

// mints reports a request an id may be minted on: a recognised browser's
// document navigation (adapter-fastly app.rs:818-826, http_util.rs:60-97),
// whose subresource requests may lack signals such as Sec-GPC.
func (f *Family) mints(r *http.Request) bool {
	ua := r.UserAgent()
	return ua != "" && !f.seam.IsBot(ua) && isDocumentNavigation(r.Header)
}

// isDocumentNavigation is upstream's is_navigation_request: Sec-Fetch-Dest
// when sent, else an Accept naming text/html.
func isDocumentNavigation(h http.Header) bool {
	if dest := h.Values("Sec-Fetch-Dest"); len(dest) > 0 {
		return strings.EqualFold(strings.TrimSpace(dest[0]), "document")
	}
	for _, v := range h.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mime, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mime), "text/html") {
				return true
			}
		}
	}
	return false
}

func (f *Family) stripHeaders(h http.Header) {
	for _, name := range ecResponseHeaders {
		h.Del(name)
	}
	for _, p := range f.all {
		h.Del("X-Ts-" + p.SourceDomain)
	}
}

// withdraw tombstones a withdrawn id (finalize.rs:141-160).
func (f *Family) withdraw(ctx context.Context, id string) {
	if f.graph == nil || !Valid(id) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if err := f.graph.tombstone(ctx, id); err != nil {
		f.failed(err, "withdrawal tombstone not written", id)
	}
}

func (f *Family) failed(err error, msg, id string) {
	if f.storeFailed != nil {
		f.storeFailed()
	}
	f.log.Warn(msg, zap.String("ec", logID(id)), zap.Error(err))
}

// cookieValues are the values of every ts-ec cookie the request sent.
func cookieValues(r *http.Request) []string {
	var out []string
	for _, c := range r.CookiesNamed(CookieName) {
		out = append(out, c.Value)
	}
	return out
}

func cookieValue(r *http.Request, name string) string {
	if c, err := r.Cookie(name); err == nil {
		return c.Value
	}
	return ""
}
