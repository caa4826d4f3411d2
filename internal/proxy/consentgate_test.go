package proxy

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/testutil"
)

// freshTC is a TCF v2 core segment last updated now (so within upstream's
// 395-day age), with or without purpose 1, laid out field by field as the
// TCF v2.2 "TC String" specification gives them.
func freshTC(purpose1 bool) string {
	var bits []byte
	put := func(v, n int) {
		for i := n - 1; i >= 0; i-- {
			bits = append(bits, byte(v>>i&1))
		}
	}
	ds := int(time.Now().UnixMilli() / 100)
	put(2, 6)
	put(ds, 36)
	put(ds, 36)
	put(7, 12)
	put(1, 12)
	put(1, 6)
	put('E'-'A', 6)
	put('N'-'A', 6)
	put(150, 12)
	put(4, 6)
	put(0, 2+12)
	p := 0
	if purpose1 {
		p = 1
	}
	put(p, 1)     // purpose 1
	put(1, 1)     // purpose 2
	put(0, 22+24) // purposes 3-24, legitimate interests
	put(0, 1+12)
	put(0, 16+1+16+1+12)
	out := make([]byte, (len(bits)+7)/8)
	for i, b := range bits {
		out[i/8] |= b << (7 - i%8)
	}
	return base64.RawURLEncoding.EncodeToString(out)
}

// gppHeaderTCF is the GPP header listing section 2 alone (type 3, version
// 1, one entry, Fibonacci 2 = "011"), padded to whole bytes.
const gppHeaderTCF = "DBABMA"

// TestUpstreamConsentPolicy: under consent.policy = "upstream", over real
// HTTP, the bidder receives regs as Trusted Server fills them and the gate
// refuses as Trusted Server's consent_allows_server_side_auction would.
func TestUpstreamConsentPolicy(t *testing.T) {
	verifyNoLeaks(t)
	grants, denies := freshTC(true), freshTC(false)
	tests := []struct {
		name            string
		country, region string
		jurisdiction    string
		cookie          string
		gpc             bool
		adStack         bool
		regs            *openrtb.Regs
		consent         string
		undecodable     bool
		tune            func(*config.ConsentConfig)
	}{
		{name: "GDPR country without a string: refused", country: "DE"},
		{name: "unknown jurisdiction without a string: refused"},
		{name: "GDPR country, purpose 1", country: "DE", cookie: "euconsent-v2=" + grants, adStack: true, regs: &openrtb.Regs{GDPR: ptr8(1)}, consent: grants},
		{name: "GDPR country, no purpose 1: refused", country: "FR", cookie: "euconsent-v2=" + denies},
		{name: "unknown jurisdiction, purpose 1", cookie: "euconsent-v2=" + grants, adStack: true, regs: &openrtb.Regs{GDPR: ptr8(1)}, consent: grants},
		{name: "purpose 1 through GPP", country: "DE", cookie: "__gpp=" + gppHeaderTCF + "~" + grants + "; __gpp_sid=2", adStack: true,
			regs: &openrtb.Regs{GDPR: ptr8(1), GPP: gppHeaderTCF + "~" + grants, GPPSID: []int{2}}},
		{name: "undecodable string: refused and logged", country: "DE", cookie: "euconsent-v2=not-a-tc-string", undecodable: true},
		{name: "US privacy state with GPC: us_privacy 1YYN", country: "US", region: "CA", gpc: true, adStack: true, regs: &openrtb.Regs{GDPR: ptr8(0), USPrivacy: "1YYN"}},
		{name: "US National section forwarded", country: "US", region: "TX", cookie: "__gpp=DBABLA~BVQqAAAAAgA.QA; us_privacy=1YNN", adStack: true,
			regs: &openrtb.Regs{GDPR: ptr8(0), USPrivacy: "1YNN", GPP: "DBABLA~BVQqAAAAAgA.QA", GPPSID: []int{7}}},
		{name: "non-regulated without signals: no regs", country: "JP", adStack: true},
		{name: "consent.jurisdiction over geo", country: "JP", jurisdiction: "GDPR"},
		{name: "consent.gdpr_applies_in with JP: refused", country: "JP", tune: func(k *config.ConsentConfig) { k.GDPRAppliesIn = []string{"JP"} }},
		{name: "consent.gpc_implies_optout false: no us_privacy", country: "US", region: "CA", gpc: true, adStack: true, regs: &openrtb.Regs{GDPR: ptr8(0)},
			tune: func(k *config.ConsentConfig) { k.GPCImpliesOptOut = false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verifyNoLeaks(t)
			ep := newBidEndpoint(t, bidOn("seat", "2"))
			e := newEnv(t, htmlPage, withOpenRTB(2000, ep), func(c *config.Config) {
				c.Consent.Policy = "upstream"
				c.Consent.Jurisdiction = tt.jurisdiction
				c.Geo.Country, c.Geo.Region = tt.country, tt.region
				if tt.tune != nil {
					tt.tune(&c.Consent)
				}
			})
			opts := []reqOpt{navigate}
			if tt.cookie != "" {
				opts = append(opts, header("Cookie", tt.cookie))
			}
			if tt.gpc {
				opts = append(opts, header("Sec-GPC", "1"))
			}
			resp, body := e.mustGet(t, "/", opts...)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if has := bytes.Contains(body, []byte(bidsOf)); has != tt.adStack {
				t.Errorf("bids in the page %v, want %v", has, tt.adStack)
			}
			line := e.accessLine(t, 1)
			if n := e.logs.FilterMessage("consent strings did not decode; counted as no consent").Len(); n != map[bool]int{true: 1}[tt.undecodable] {
				t.Errorf("%d decode warnings, want %v", n, tt.undecodable)
			}
			reqs := ep.received()
			if !tt.adStack {
				if len(reqs) != 0 || line["ineligible"] != "consent" {
					t.Errorf("%d bid requests, ineligible %v; want none and consent", len(reqs), line["ineligible"])
				}
				return
			}
			if len(reqs) != 1 {
				t.Fatalf("%d bid requests", len(reqs))
			}
			if !reflect.DeepEqual(reqs[0].Regs, tt.regs) {
				t.Errorf("regs %+v, want %+v", reqs[0].Regs, tt.regs)
			}
			got := ""
			if reqs[0].User != nil {
				got = reqs[0].User.Consent
			}
			if got != tt.consent {
				t.Errorf("user.consent %q, want %q", got, tt.consent)
			}
		})
	}
}

func ptr8(v int8) *int8 { return &v }

// POST /auction decides consent as pages do: under "upstream", a GDPR
// country without purpose 1 gets no bids and no bid request; with it the
// bidder receives the same regs a page's auction sends (upstream's
// /auction uses the same consent_allows_server_side_auction,
// auction/endpoints.rs).
func TestUpstreamConsentPolicyOnAuctionEndpoint(t *testing.T) {
	ep := newBidEndpoint(t, bidOn("seat1", "2"))
	e := newEnv(t, http.NotFoundHandler(), withOpenRTB(2000, ep), func(c *config.Config) {
		c.Consent.Policy = "upstream"
		c.Geo.Country = "DE"
	})
	resp, body := e.post(t, "/auction", "application/json", testutil.TsjsAdRequest, func(r *http.Request) {
		r.AddCookie(&http.Cookie{Name: "euconsent-v2", Value: freshTC(false)})
	})
	if resp.StatusCode != http.StatusOK || len(testutil.ParseLikeTsjs(t, body)) != 0 || len(ep.received()) != 0 {
		t.Fatalf("without purpose 1: %d %s, %d bid requests", resp.StatusCode, body, len(ep.received()))
	}
	grants := freshTC(true)
	resp, body = e.post(t, "/auction", "application/json", testutil.TsjsAdRequest, func(r *http.Request) {
		r.AddCookie(&http.Cookie{Name: "euconsent-v2", Value: grants})
		r.Header.Set("Sec-GPC", "1")
	})
	if resp.StatusCode != http.StatusOK || len(testutil.ParseLikeTsjs(t, body)) == 0 || len(ep.received()) != 1 {
		t.Fatalf("with purpose 1: %d %s, %d bid requests", resp.StatusCode, body, len(ep.received()))
	}
	br := ep.received()[0]
	if !reflect.DeepEqual(br.Regs, &openrtb.Regs{GDPR: ptr8(1)}) || br.User == nil || br.User.Consent != grants {
		t.Errorf("regs %+v user %+v; want gdpr 1 and the TC string", br.Regs, br.User)
	}
}
