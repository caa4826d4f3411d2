package proxy

import (
	"net/http"
	"sync"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// The mode parameters are ssatd's while it reads them: they were removed
// from the origin request but stayed in the OpenRTB site.page sent to
// bidders. Both now come from one place (publisherQuery), which also keeps
// the publisher's own pairs byte for byte and in order (the origin's query
// had been re-encoded, sorted).
func TestModeParameterNeverReachesBidders(t *testing.T) {
	override := func(c *config.Config) { c.Debug.AllowModeOverride = true }
	for _, tt := range []struct {
		name, query, want string
		mut               func(*config.Config)
	}{
		{"upstream's parameter, diagnostics on", "z=1&" + TSModeParam + "=identity&a=2", "z=1&a=2", diagnostics},
		{"ssatd's parameter, override on", ModeOverrideParam + "=mirror&b=x&a=%41", "b=x&a=%41", override},
		{"an encoded key", "__ts_ssat%5Fcompression=mirror&a=1", "a=1", diagnostics},
		{"only the parameter", TSModeParam + "=identity", "", diagnostics},
		{"neither option on: the publisher's own", TSModeParam + "=identity&a=1", TSModeParam + "=identity&a=1", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var originQuery []string
			origin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				originQuery = append(originQuery, r.URL.RawQuery)
				mu.Unlock()
				htmlPage(w, r)
			})
			ep := newBidEndpoint(t, bidOn("seat", "1.00"))
			muts := []func(*config.Config){withOpenRTB(2000, ep)}
			if tt.mut != nil {
				muts = append(muts, tt.mut)
			}
			e := newEnv(t, origin, muts...)
			if resp, _ := e.mustGet(t, "/news/a?"+tt.query, navigate); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			e.accessLine(t, 1) // the auction has ended
			page := "http://" + testDomain + "/news/a"
			if tt.want != "" {
				page += "?" + tt.want
			}
			reqs := ep.received()
			if len(reqs) != 1 || reqs[0].Site.Page != page {
				var got []string
				for _, r := range reqs {
					got = append(got, r.Site.Page)
				}
				t.Errorf("site.page %q, want %q", got, page)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(originQuery) != 1 || originQuery[0] != tt.want {
				t.Errorf("origin query %q, want %q", originQuery, tt.want)
			}
		})
	}
}
