package proxy

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/firstparty"
	"github.com/ssatd/ssatd/internal/ssat"
)

// creatives.process in each render context: inline creatives get the
// price expanded and absolute URLs on the client's origin, /auction's
// root-relative ones with the bundle; an empty result drops the bid; the
// bids handed in (a static provider's own map) are never modified.
func TestCreativesProcessEachRenderContext(t *testing.T) {
	fpc := config.FirstPartyConfig{ProxySecret: "unit-test-proxy-secret", RewriteCreatives: true, SanitizeCreatives: true}
	f, err := firstparty.New(firstparty.Config{ProxySecret: fpc.ProxySecret.Expose(), SanitizeCreatives: true}, firstparty.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	c := newCreatives(&fpc, f, []byte(`<script src="/b.js"></script>`), zap.NewNop())
	view := clientView{scheme: "https", host: "news.test:8443"}
	in := map[string]ssat.Bid{
		"img":    {Adm: `<img src="https://cdn.example/a.png?p=${AUCTION_PRICE}">`, Price: 1.5, HbPb: "1.50"},
		"script": {Adm: `<script src="https://cdn.example/x.js"></script>`, Price: 2},
	}
	orig := map[string]ssat.Bid{}
	for k, v := range in {
		orig[k] = v
	}
	for _, tc := range []struct {
		name   string
		render family.Render
		prefix string // of the img's src
		price  string // the p= in its tsurl
		bundle bool
	}{
		{"inline", family.RenderInline, `<img src="https://news.test:8443/first-party/proxy?tsurl=`, "p=1.5&", false},
		{"auction", family.RenderAuction, `<script src="/b.js"></script><img src="/first-party/proxy?tsurl=`, "p=%24%7BAUCTION_PRICE%7D&", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := c.process(in, tc.render, view)
			if _, ok := out["script"]; ok || len(out) != 1 {
				t.Fatalf("bids %v, want only img (script sanitized to nothing)", out)
			}
			adm := out["img"].Adm
			if !strings.HasPrefix(adm, tc.prefix) || !strings.Contains(adm, tc.price) {
				t.Errorf("adm %s, want it to start %s and carry %s", adm, tc.prefix, tc.price)
			}
			if out["img"].HbPb != "1.50" {
				t.Errorf("the bid's other fields changed: %+v", out["img"])
			}
			if !reflect.DeepEqual(in, orig) {
				t.Errorf("the bids handed in were modified: %v", in)
			}
		})
	}
	if off := newCreatives(&config.FirstPartyConfig{}, nil, nil, zap.NewNop()); !reflect.DeepEqual(off.process(in, family.RenderInline, view), orig) {
		t.Errorf("a native configuration changed the bids")
	}
}

// /first-party/proxy counts a client's concurrent fetches by the client's
// address as the guest decided it: behind a trusted proxy, the forwarded
// one. Keyed by the peer, every reader behind the proxy shared one
// allowance, and a second reader was refused 429 while the first had 16
// fetches in flight.
func TestFirstPartyFetchesCountPerForwardedClient(t *testing.T) {
	const secret = "per-client-test-secret"
	arrived := make(chan struct{}, 32)
	release := make(chan struct{})
	ad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte("image"))
	}))
	t.Cleanup(ad.Close)
	e := newEnv(t, http.NotFoundHandler(), func(c *config.Config) {
		c.Server.TrustedProxies = []string{"127.0.0.0/8", "::1/128"}
		c.FirstParty = config.FirstPartyConfig{ProxySecret: secret, AllowedDomains: []string{"127.0.0.1"}, CertificateCheck: true}
	})
	signer, err := firstparty.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	target := ad.URL + "/x.png"
	path := firstparty.PathProxy + "?tsurl=" + url.QueryEscape(target) + "&tstoken=" + signer.Token(target)
	statuses := make(chan int, firstparty.DefaultPerClient+1)
	fetch := func(ip string) {
		resp, _, err := e.get(t, path, header("X-Forwarded-For", ip))
		if err != nil {
			statuses <- 0
			return
		}
		statuses <- resp.StatusCode
	}
	for range firstparty.DefaultPerClient {
		go fetch("203.0.113.1")
	}
	for range firstparty.DefaultPerClient {
		<-arrived
	}
	if resp, _, err := e.get(t, path, header("X-Forwarded-For", "203.0.113.1")); err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the first reader's fetch over its allowance: %v %v, want 429", resp.Status, err)
	}
	go fetch("203.0.113.2")
	pending := firstparty.DefaultPerClient + 1
	select {
	case <-arrived: // the second reader's fetch reached the ad server
	case s := <-statuses:
		pending--
		t.Errorf("the second reader's fetch was answered %d without reaching the ad server", s)
	}
	close(release)
	for range pending {
		if s := <-statuses; s != http.StatusOK {
			t.Errorf("a fetch in flight was answered %d, want 200", s)
		}
	}
}

// /first-party/sign gives a protocol-relative URL the scheme the client
// used, as the guest decided it: behind a trusted proxy that terminated
// TLS, https. It took the scheme of the proxy's plain connection to ssatd,
// and signed an http URL for an https page.
func TestFirstPartySignTakesTheForwardedScheme(t *testing.T) {
	e := newEnv(t, http.NotFoundHandler(), func(c *config.Config) {
		c.Server.TrustedProxies = []string{"127.0.0.0/8", "::1/128"}
		c.FirstParty = config.FirstPartyConfig{ProxySecret: "sign-scheme-test-secret", CertificateCheck: true}
	})
	for _, tc := range []struct {
		name, proto, want string
	}{
		{"forwarded https", "https", "tsurl=https%3A%2F%2Fcdn.example%2Fa.png"},
		{"plain", "", "tsurl=http%3A%2F%2Fcdn.example%2Fa.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []reqOpt
			if tc.proto != "" {
				opts = append(opts, header("X-Forwarded-Proto", tc.proto))
			}
			resp, body := e.mustGet(t, firstparty.PathSign+"?url=//cdn.example/a.png", opts...)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.want) {
				t.Errorf("%d %s, want %s", resp.StatusCode, body, tc.want)
			}
		})
	}
}
