package signing_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/signing"
	"github.com/ssatd/ssatd/internal/ssat"
)

// tsExt is ext.trusted_server as a bidder reads it.
type tsExt struct {
	Version       string `json:"version"`
	Signature     string `json:"signature"`
	Kid           string `json:"kid"`
	RequestHost   string `json:"request_host"`
	RequestScheme string `json:"request_scheme"`
	TS            int64  `json:"ts"`
}

// bidder is a Prebid Server stand-in that checks every request's
// ext.trusted_server the way a bidder would, with nothing of the signer:
// the keys come from the discovery document fetched over HTTP, the payload
// is built from upstream's description (signing.rs:65-77) and the
// signature checked with crypto/ed25519.
type bidder struct {
	discoveryURL string
	client       *http.Client

	mu       sync.Mutex
	keys     map[string]ed25519.PublicKey
	fetches  int
	verified map[string]int // kid -> requests verified
	failures []string
}

func (b *bidder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID   string `json:"id"`
		Site struct {
			Domain string `json:"domain"`
		} `json:"site"`
		Ext struct {
			TS *tsExt `json:"trusted_server"`
		} `json:"ext"`
	}
	err := json.NewDecoder(r.Body).Decode(&req)
	if err == nil {
		err = b.check(req.ID, req.Site.Domain, req.Ext.TS)
	}
	b.mu.Lock()
	if err != nil {
		b.failures = append(b.failures, err.Error())
	} else {
		b.verified[req.Ext.TS.Kid]++
	}
	b.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (b *bidder) check(id, domain string, ts *tsExt) error {
	switch {
	case ts == nil:
		return errors.New("no ext.trusted_server")
	case ts.RequestHost != domain || ts.RequestScheme != "https":
		return fmt.Errorf("request_host %q request_scheme %q, site.domain %q", ts.RequestHost, ts.RequestScheme, domain)
	case ts.Version != "1.1":
		return fmt.Errorf("version %q", ts.Version)
	case time.Since(time.UnixMilli(ts.TS)).Abs() > time.Minute:
		return fmt.Errorf("ts %d is not now", ts.TS)
	}
	pub, err := b.key(ts.Kid)
	if err != nil {
		return err
	}
	payload, _ := json.Marshal(struct {
		Version string `json:"version"`
		Kid     string `json:"kid"`
		Host    string `json:"host"`
		Scheme  string `json:"scheme"`
		ID      string `json:"id"`
		TS      int64  `json:"ts"`
	}{ts.Version, ts.Kid, ts.RequestHost, ts.RequestScheme, id, ts.TS})
	sig, err := base64.RawURLEncoding.DecodeString(ts.Signature)
	if err != nil {
		return fmt.Errorf("signature not base64url: %w", err)
	}
	if !ed25519.Verify(pub, payload, sig) {
		return fmt.Errorf("signature of %s does not verify", payload)
	}
	return nil
}

// key is kid's public key, fetching the discovery document again for a
// kid it does not know, as a bidder does after a rotation.
func (b *bidder) key(kid string) (ed25519.PublicKey, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k, ok := b.keys[kid]; ok {
		return k, nil
	}
	b.fetches++
	resp, err := b.client.Get(b.discoveryURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var doc struct {
		Version string `json:"version"`
		JWKS    struct {
			Keys []struct{ Kty, Crv, X, Kid, Alg string } `json:"keys"`
		} `json:"jwks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || doc.Version != "1.0" {
		return nil, fmt.Errorf("discovery document: %v (version %q)", err, doc.Version)
	}
	for _, k := range doc.JWKS.Keys {
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if k.Kty != "OKP" || k.Crv != "Ed25519" || k.Alg != "EdDSA" || err != nil || len(x) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("unusable JWK %+v", k)
		}
		b.keys[k.Kid] = x
	}
	if k, ok := b.keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("kid %q is not published", kid)
}

// TestBidderVerifiesEverySignedRequest catches a bid request a bidder
// cannot verify against the published keys, before and after a key
// rotation: every request the auction sends through the hook carries
// ext.trusted_server whose signature verifies with the JWKS fetched over
// HTTP.
func TestBidderVerifiesEverySignedRequest(t *testing.T) {
	dir := t.TempDir()
	first, _, err := signing.Init(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	fam, err := signing.New(config.RequestSigningConfig{Enabled: true, KeyDir: dir},
		signing.Deps{AdminAuth: func(http.ResponseWriter, *http.Request) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(fam.Handler())
	defer site.Close()
	b := &bidder{discoveryURL: site.URL + signing.PathDiscovery, client: site.Client(),
		keys: map[string]ed25519.PublicKey{}, verified: map[string]int{}}
	pbs := httptest.NewServer(b)
	defer pbs.Close()

	p := auction.NewOpenRTB(auction.OpenRTBOptions{
		Endpoints:     []auction.Endpoint{{Name: "pbs-1", URL: pbs.URL}, {Name: "pbs-2", URL: pbs.URL}},
		TrustedServer: fam.Signer(),
	})
	defer p.Close()
	req := auction.Request{Slots: []ssat.Slot{{ID: "top", Formats: [][]int{{300, 250}}}}, Domain: "www.pub.example"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 3 {
		_, _ = p.Bids(ctx, req)
	}
	resp, err := site.Client().Post(site.URL+signing.PathRotate, "application/json", strings.NewReader(`{"kid":"kid-next"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("rotate: %d", resp.StatusCode)
	}
	for range 2 {
		_, _ = p.Bids(ctx, req)
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.failures {
		t.Error(f)
	}
	if b.verified[first] != 6 || b.verified["kid-next"] != 4 || b.fetches != 2 {
		t.Errorf("verified %v after %d fetches; want 6 with %s and 4 with kid-next after 2", b.verified, b.fetches, first)
	}
}
