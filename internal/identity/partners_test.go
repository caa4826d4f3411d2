package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/openrtb"
)

func identify(t *testing.T, srv *httptest.Server, origin, token, consent string, cookies ...*http.Cookie) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+IdentifyPath, nil)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("X-Test-Consent", consent)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" || resp.Header.Get("Vary") != "Origin, Authorization" {
		t.Errorf("identify: Cache-Control %q, Vary %q", cc, resp.Header.Get("Vary"))
	}
	return resp.StatusCode, string(b)
}

func batchSync(t *testing.T, srv *httptest.Server, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+BatchSyncPath, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestIdentifyAndBatchSyncAnswerAsUpstream: statuses and JSON of
// ec/identify.rs:36-180 and ec/batch_sync.rs:100-240, against both stores.
func TestIdentifyAndBatchSyncAnswerAsUpstream(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			srv, _, _ := site(t, s.open(t))
			c := edgeCookie(navigate(t, srv, "allow"))
			if c == nil {
				t.Fatal("no edge cookie")
			}
			unknown := strings.Repeat("b", 64) + ".Zz9Zz9"
			tests := []struct {
				name, origin, token, consent string
				cookie                       *http.Cookie
				status                       int
				body                         string
			}{
				{"no token", "", "", "allow", c, 401, `{"error":"invalid_token"}`},
				{"wrong token", "", "x" + partnerToken, "allow", c, 401, `{"error":"invalid_token"}`},
				{"http origin", "http://news.test", partnerToken, "allow", c, 403, ``},
				{"foreign origin", "https://evil.test", partnerToken, "allow", c, 403, ``},
				{"upper-case origin host", "https://News.test", partnerToken, "allow", c, 403, ``},
				{"no consent", "", partnerToken, "", c, 403, `{"consent":"denied"}`},
				{"no cookie", "", partnerToken, "allow", nil, 204, ``},
				{"no uid yet", "https://www.news.test", partnerToken, "allow", c, 200,
					`{"ec":"` + c.Value + `","consent":"ok","degraded":false,"source_domain":"one.example"}`},
			}
			for _, tt := range tests {
				var cookies []*http.Cookie
				if tt.cookie != nil {
					cookies = append(cookies, tt.cookie)
				}
				code, body := identify(t, srv, tt.origin, tt.token, tt.consent, cookies...)
				if code != tt.status || body != tt.body {
					t.Errorf("%s: %d %s, want %d %s", tt.name, code, body, tt.status, tt.body)
				}
			}

			upper := strings.ToUpper(c.Value[:64]) + c.Value[64:]
			code, body := batchSync(t, srv, partnerToken, fmt.Sprintf(`{"mappings":[
				{"ec_id":%q,"partner_uid":"uid-1","timestamp":1},
				{"ec_id":"nope","partner_uid":"uid-2","timestamp":1},
				{"ec_id":%q,"partner_uid":"  ","timestamp":1},
				{"ec_id":%q,"partner_uid":"uid-4","timestamp":1}]}`, upper, c.Value, unknown))
			if want := `{"accepted":1,"rejected":3,"errors":[{"index":1,"reason":"invalid_ec_id"},{"index":2,"reason":"invalid_partner_uid"},{"index":3,"reason":"ineligible"}]}`; code != 207 || body != want {
				t.Errorf("batch-sync: %d %s\nwant 207 %s", code, body, want)
			}
			code, body = identify(t, srv, "https://news.test", partnerToken, "allow", c)
			want := `{"ec":"` + c.Value + `","consent":"ok","degraded":false,"source_domain":"one.example","uid":"uid-1","eid":{"source":"one.example","uids":[{"id":"uid-1","atype":3}]}}`
			if code != 200 || body != want {
				t.Errorf("identify after sync: %d %s\nwant 200 %s", code, body, want)
			}
			code, body = batchSync(t, srv, partnerToken, fmt.Sprintf(`{"mappings":[{"ec_id":%q,"partner_uid":"uid-1","timestamp":2}]}`, c.Value))
			if code != 200 || body != `{"accepted":1,"rejected":0,"errors":[]}` {
				t.Errorf("unchanged mapping: %d %s", code, body)
			}
			// batch_rate_limit is 3 a minute: the third call is the last.
			code, _ = batchSync(t, srv, partnerToken, `{"mappings":[]}`)
			if code != 200 {
				t.Errorf("third batch: %d", code)
			}
			if code, body = batchSync(t, srv, partnerToken, `{"mappings":[]}`); code != 429 || body != `{"error":"rate_limit_exceeded"}` {
				t.Errorf("past the rate limit: %d %s", code, body)
			}
		})
	}
}

func TestBatchSyncRefusesWhatUpstreamRefuses(t *testing.T) {
	srv, f, _ := site(t, stores[0].open(t))
	f.all[0].limit.n = 1 << 20
	many := `{"mappings":[` + strings.Repeat(`{"ec_id":"x","partner_uid":"u","timestamp":1},`, maxBatchMappings) + `{"ec_id":"x","partner_uid":"u","timestamp":1}]}`
	tests := []struct {
		name, token, body string
		status            int
		prefix            string
	}{
		{"no token", "", `{"mappings":[]}`, 401, `{"error":"invalid_token"}`},
		{"too many mappings", partnerToken, many, 400, `{"error":"batch_too_large"}`},
		{"body past 2 MB", partnerToken, `{"mappings":[],"pad":"` + strings.Repeat("x", maxBatchBody) + `"}`, 413, `{"error":"body_too_large"}`},
		{"not JSON", partnerToken, `{`, 400, "Bad request: Invalid request body:"},
		{"no timestamp", partnerToken, `{"mappings":[{"ec_id":"x","partner_uid":"u"}]}`, 400, "Bad request: Invalid request body: missing field `timestamp`"},
	}
	for _, tt := range tests {
		code, body := batchSync(t, srv, tt.token, tt.body)
		if code != tt.status || !strings.HasPrefix(body, tt.prefix) {
			t.Errorf("%s: %d %.80s, want %d %s", tt.name, code, body, tt.status, tt.prefix)
		}
	}
}

// TestBatchSyncStoreOutageRejectsTheRest: kv_unavailable for the failed
// mapping and every one after it (batch_sync.rs:213-232).
func TestBatchSyncStoreOutageRejectsTheRest(t *testing.T) {
	st := stores[0].open(t)
	srv, _, _ := site(t, st)
	st.Close()
	id := strings.Repeat("a", 64) + ".abcXYZ"
	code, body := batchSync(t, srv, partnerToken, fmt.Sprintf(`{"mappings":[{"ec_id":"bad","partner_uid":"u","timestamp":1},{"ec_id":%q,"partner_uid":"u","timestamp":1},{"ec_id":%q,"partner_uid":"v","timestamp":1}]}`, id, id))
	var got batchResponse
	if err := json.Unmarshal([]byte(body), &got); err != nil || code != 207 || got.Rejected != 3 ||
		got.Errors[1].Reason != "kv_unavailable" || got.Errors[2].Reason != "kv_unavailable" {
		t.Errorf("%d %s", code, body)
	}
}

// TestIdentifyPreflight: OPTIONS answers CORS for an allowed origin
// (identify.rs:193-221).
func TestIdentifyPreflight(t *testing.T) {
	srv, _, _ := site(t, stores[0].open(t))
	for origin, want := range map[string]int{"https://news.test": 200, "": 200, "https://evil.test": 403} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodOptions, srv.URL+IdentifyPath, nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		acao := resp.Header.Get("Access-Control-Allow-Origin")
		if resp.StatusCode != want || (want == 200 && origin != "") != (acao == origin && resp.Header.Get("Access-Control-Allow-Methods") == "GET, OPTIONS") {
			t.Errorf("OPTIONS from %q: %d, allow-origin %q", origin, resp.StatusCode, acao)
		}
	}
}

// TestBidstreamFollowsConsent: user.id only with the edge cookie's
// consent, user.ext.eids only with the EIDs' too, and only for
// bidstream_enabled partners.
func TestBidstreamFollowsConsent(t *testing.T) {
	srv, f, _ := site(t, stores[0].open(t))
	c := edgeCookie(navigate(t, srv, "allow"))
	if code, body := batchSync(t, srv, partnerToken, fmt.Sprintf(`{"mappings":[{"ec_id":%q,"partner_uid":"u1","timestamp":1}]}`, c.Value)); code != 200 {
		t.Fatalf("batch-sync %d %s", code, body)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(c)
	allow := func(eids bool) privacy.Decision {
		return privacy.Decision{EC: privacy.ECGate{Allowed: true, EIDs: eids}}
	}
	if id, eids := f.Bidstream(r, privacy.Decision{}, ""); id != "" || eids != nil {
		t.Errorf("without consent: %q %v", id, eids)
	}
	if id, eids := f.Bidstream(r, allow(true), ""); id != c.Value || eids != nil {
		t.Errorf("partner not bidstream_enabled: %q %v", id, eids)
	}
	f.all[0].BidstreamEnabled = true
	if id, eids := f.Bidstream(r, allow(false), ""); id != c.Value || eids != nil {
		t.Errorf("eids without their consent: %q %v", id, eids)
	}
	id, eids := f.Bidstream(r, allow(true), "")
	if want := []openrtb.EID{{Source: "one.example", UIDs: []openrtb.UID{{ID: "u1", Atype: 3}}}}; id != c.Value || !reflect.DeepEqual(eids, want) {
		t.Errorf("with consent: %q %+v", id, eids)
	}
}
