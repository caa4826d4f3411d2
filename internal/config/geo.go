package config

import (
	"math"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// GeoConfig is the [geo] section: where the client is, for OpenRTB
// device.geo. On Fastly, Trusted Server fills device.geo from Fastly's
// geolocation of the client address (crates/trusted-server-adapter-fastly,
// platform.rs, geo_from_fastly); ssatd has no geolocation database, so the
// location is configured, or read from a header a trusted proxy sets.
type GeoConfig struct {
	// Country is an ISO 3166-1 alpha-2 code, as Fastly's geo.country_code
	// gives it and Trusted Server sends it.
	Country string `toml:"country" env:"COUNTRY"`
	// Region is an ISO 3166-2 subdivision code without the country, such
	// as "CA"; City is a name.
	Region string `toml:"region" env:"REGION"`
	City   string `toml:"city" env:"CITY"`
	// Latitude and Longitude in degrees; both 0 means unset.
	Latitude  float64 `toml:"latitude" env:"LATITUDE"`
	Longitude float64 `toml:"longitude" env:"LONGITUDE"`
	// CountryHeader names a request header, such as CF-IPCountry, whose
	// alpha-2 value replaces Country. It is read only from requests whose
	// peer is in server.trusted_proxies.
	CountryHeader string `toml:"country_header" env:"COUNTRY_HEADER"`
}

// HasLocation reports whether latitude and longitude are set.
func (g *GeoConfig) HasLocation() bool { return g.Latitude != 0 || g.Longitude != 0 }

// IsCountryCode reports whether s is two ASCII letters, upper case.
func IsCountryCode(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

func (c *Config) validateGeo(p *problems) {
	g := &c.Geo
	if g.Country != "" {
		g.Country = strings.ToUpper(g.Country)
		if !IsCountryCode(g.Country) {
			p.addf("geo.country", "must be an ISO 3166-1 alpha-2 code such as \"DE\", got %q", g.Country)
		}
	}
	if math.IsNaN(g.Latitude) || g.Latitude < -90 || g.Latitude > 90 {
		p.addf("geo.latitude", "must be between -90 and 90 degrees, got %v", g.Latitude)
	}
	if math.IsNaN(g.Longitude) || g.Longitude < -180 || g.Longitude > 180 {
		p.addf("geo.longitude", "must be between -180 and 180 degrees, got %v", g.Longitude)
	}
	if g.CountryHeader != "" && !httpguts.ValidHeaderFieldName(g.CountryHeader) {
		p.addf("geo.country_header", "is not a valid HTTP header name: %q", g.CountryHeader)
	}
}

// geoWarnings are the [geo] warnings of config check.
func (c *Config) geoWarnings() []string {
	if c.Geo.CountryHeader != "" && len(c.Server.TrustedProxies) == 0 {
		return []string{"geo.country_header is set but server.trusted_proxies is empty: the header is read only from trusted proxies, so it is never used"}
	}
	return nil
}
