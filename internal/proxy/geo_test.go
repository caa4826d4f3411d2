package proxy

import (
	"fmt"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/openrtb"
)

// device.geo in the bid request: from [geo], with the country of
// geo.country_header when, and only when, a trusted proxy sent it.
func TestOpenRTBDeviceGeo(t *testing.T) {
	lat, lon := 48.86, 2.35
	paris := func(c *config.Config) {
		c.Geo = config.GeoConfig{Country: "FR", Region: "IDF", City: "Paris", Latitude: lat, Longitude: lon}
	}
	fromHeader := func(trusted bool) func(*config.Config) {
		return func(c *config.Config) {
			c.Geo.CountryHeader = "CF-IPCountry"
			if trusted {
				c.Server.TrustedProxies = []string{"127.0.0.0/8"}
			}
		}
	}
	full := &openrtb.Geo{Type: 2, Country: "FR", Region: "IDF", City: "Paris", Lat: &lat, Lon: &lon}
	tests := []struct {
		name   string
		cfg    []func(*config.Config)
		header string // CF-IPCountry sent by the client
		want   *openrtb.Geo
	}{
		{"no [geo]", nil, "DE", nil},
		{"static place", []func(*config.Config){paris}, "", full},
		{"header from a trusted proxy", []func(*config.Config){fromHeader(true)}, "de", &openrtb.Geo{Type: 2, Country: "DE"}},
		{"header from a trusted proxy replaces another country", []func(*config.Config){paris, fromHeader(true)}, "DE", &openrtb.Geo{Type: 2, Country: "DE"}},
		{"header naming the static country keeps the place", []func(*config.Config){paris, fromHeader(true)}, "FR", full},
		{"header from an untrusted peer is ignored", []func(*config.Config){paris, fromHeader(false)}, "DE", full},
		{"unknown country XX is ignored", []func(*config.Config){paris, fromHeader(true)}, "XX", full},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := newBidEndpoint(t, bidOn("seat", "1"))
			e := newEnv(t, htmlPage, append([]func(*config.Config){withOpenRTB(2000, ep)}, tt.cfg...)...)
			opts := []reqOpt{navigate}
			if tt.header != "" {
				opts = append(opts, header("CF-IPCountry", tt.header))
			}
			e.mustGet(t, "/", opts...)
			reqs := ep.received()
			if len(reqs) != 1 {
				t.Fatalf("%d bid requests, want 1", len(reqs))
			}
			if got := reqs[0].Device.Geo; !sameGeo(got, tt.want) {
				t.Errorf("device.geo %s, want %s", geoString(got), geoString(tt.want))
			}
		})
	}
}

func sameGeo(a, b *openrtb.Geo) bool {
	return geoString(a) == geoString(b)
}

func geoString(g *openrtb.Geo) string {
	if g == nil {
		return "<none>"
	}
	f := func(p *float64) any {
		if p == nil {
			return "-"
		}
		return *p
	}
	return fmt.Sprintf("type %d %s/%s/%s at %v,%v", g.Type, g.Country, g.Region, g.City, f(g.Lat), f(g.Lon))
}
