package proxy

import (
	"io"
	"net/http"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// A client that leaves in the middle of a response that is not a page (an
// asset passed through as the origin sent it) is client_gone in
// ssatd_failures_total as it is on the pipeline route, with the builtin
// edge in front (it then sees the client leave) or without an edge. The dashboard's "Error ratio" and
// the SsatdErrorRatioHigh alert take every request whose outcome is not ok
// and subtract the client_gone failures: an aborted request missing from
// ssatd_failures_total would count as an error.
func TestClientLeavingPassThroughIsNotAnError(t *testing.T) {
	tests := []struct {
		name     string
		platform string
	}{
		{"builtin edge", config.DeliveryCompressionBuiltin},
		{"no edge", config.DeliveryCompressionExternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream") // outside publisher.rewrite_content_types
				w.Header().Set("Content-Length", "100000")
				w.Write([]byte("first chunk of an asset"))
				w.(http.Flusher).Flush()
				<-r.Context().Done() // the rest never comes before the client leaves
			}), func(c *config.Config) { c.Platform.DeliveryCompression = tt.platform })
			tr := &http.Transport{DisableCompression: true}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, e.front.URL+"/asset.dat", nil)
			req.Host = testDomain
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadAtLeast(resp.Body, make([]byte, 1), 1); err != nil {
				t.Fatalf("first chunk: %v", err)
			}
			resp.Body.Close() // an unfinished body: the connection is closed
			line := e.accessLine(t, 1)
			if line["route"] != string(routePassThrough) || line["outcome"] != outcomeAborted || line["reason"] != reasonClientGone.String() {
				t.Fatalf("route %v outcome %v reason %v (error %v); want %s, %s, %s", line["route"], line["outcome"],
					line["reason"], line["error"], routePassThrough, outcomeAborted, reasonClientGone.String())
			}
			if edged := tt.platform == config.DeliveryCompressionBuiltin; edged != (line["guest_output_bytes"] != nil) {
				t.Fatalf("builtin edge in front: %v, but the access line has guest_output_bytes %v", edged, line["guest_output_bytes"])
			}
			m := e.guest.Metrics()
			if n := m.Failures(reasonClientGone.String()); n != 1 {
				t.Errorf("ssatd_failures_total{reason=%q} = %d, want 1", reasonClientGone.String(), n)
			}
			// The error ratio's numerator, as deploy/grafana/ssatd.json and
			// deploy/prometheus/alerts.yml compute it.
			notOK := m.Sum("ssatd_requests_total", nil) - m.Sum("ssatd_requests_total", map[string]string{"outcome": outcomeOK})
			gone := m.Sum("ssatd_failures_total", map[string]string{"reason": reasonClientGone.String()})
			if notOK != 1 || notOK-gone != 0 {
				t.Errorf("requests not ok %v, client_gone failures %v: the error ratio counts %v errors, want 0", notOK, gone, notOK-gone)
			}
		})
	}
}
