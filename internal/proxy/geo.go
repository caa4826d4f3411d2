package proxy

import (
	"net/http"
	"strings"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/openrtb"
)

// geoOptions are the [geo] settings: where the client is, for OpenRTB
// device.geo. Trusted Server on Fastly takes it from Fastly's geolocation
// of the client address; ssatd from configuration, or a header set by a
// trusted proxy.
type geoOptions struct {
	static        *openrtb.Geo // nil when [geo] names no place
	countryHeader string
}

func geoOptionsOf(gc *config.GeoConfig) geoOptions {
	o := geoOptions{countryHeader: gc.CountryHeader}
	if gc.Country == "" && gc.Region == "" && gc.City == "" && !gc.HasLocation() {
		return o
	}
	// Type 2, IP address, as Trusted Server sends it: the static place
	// stands for the geolocation of the client address.
	o.static = &openrtb.Geo{Type: 2, Country: gc.Country, Region: gc.Region, City: gc.City}
	if gc.HasLocation() {
		lat, lon := gc.Latitude, gc.Longitude
		o.static.Lat, o.static.Lon = &lat, &lon
	}
	return o
}

// geoOf is the client's device.geo, worked out once per request as part
// of its view (hostPolicy.view): the static place, with the country of
// geo.country_header when a trusted proxy sent a valid one. A header
// country that differs from the static one drops the static region, city
// and coordinates, which belong to another country. nil when nothing is
// known.
func (o geoOptions) geoOf(r *http.Request, trusted bool) *openrtb.Geo {
	var geo *openrtb.Geo
	if o.static != nil {
		c := *o.static
		geo = &c
	}
	if o.countryHeader == "" || !trusted {
		return geo
	}
	country := strings.ToUpper(strings.TrimSpace(r.Header.Get(o.countryHeader)))
	if !config.IsCountryCode(country) || country == "XX" {
		// Absent, or a placeholder such as Cloudflare's XX and T1.
		return geo
	}
	if geo == nil || geo.Country != country {
		geo = &openrtb.Geo{Type: 2, Country: country}
	}
	return geo
}
