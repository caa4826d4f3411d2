package auction

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
)

// TestTrustedServerHookFillsExt catches a bid request without the hook's
// ext.trusted_server, with its fields out of upstream's order
// (IABTechLab/trusted-server crates/trusted-server-core/src/openrtb.rs:
// 132-148), or given another id or host than the request's own; and
// checks that without the hook the request is as before.
func TestTrustedServerHookFillsExt(t *testing.T) {
	verifyNoLeaks(t)
	var gotID, gotHost string
	hook := func(id, host string) *openrtb.TrustedServerExt {
		gotID, gotHost = id, host
		return &openrtb.TrustedServerExt{Version: "1.1", Signature: "c2ln", Kid: "ts-2026-12-03",
			RequestHost: host, RequestScheme: "https", TS: 1764763200000}
	}
	for _, tc := range []struct {
		name string
		hook func(id, host string) *openrtb.TrustedServerExt
		want string // ext as sent; "" for none
	}{
		{"hook", hook, `{"prebid":{"debug":true,"returnallbidstatus":true},"trusted_server":{"version":"1.1","signature":"c2ln","kid":"ts-2026-12-03","request_host":"` + testRequest.Domain + `","request_scheme":"https","ts":1764763200000}}`},
		{"no hook", nil, `{"prebid":{"debug":true,"returnallbidstatus":true}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
			f := newFixture(t, OpenRTBOptions{TrustedServer: tc.hook, Endpoints: []Endpoint{{Debug: true}}}, e)
			_, _, _ = f.run(t, time.Second)
			if e.calls() != 1 {
				t.Fatalf("%d calls", e.calls())
			}
			var got struct {
				ID  string          `json:"id"`
				Ext json.RawMessage `json:"ext"`
			}
			if err := json.Unmarshal(e.bodies[0], &got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Ext, []byte(tc.want)) {
				t.Errorf("ext\n%s\nwant\n%s", got.Ext, tc.want)
			}
			if tc.hook != nil && (gotID != got.ID || gotHost != testRequest.Domain) {
				t.Errorf("hook given id %q host %q; the request's are %q, %q", gotID, gotHost, got.ID, testRequest.Domain)
			}
		})
	}
}
