package config

import (
	"bytes"
	"strings"
	"testing"
)

// TestMaskURLHidesQueryValues catches a secret in an endpoint URL's query
// (issue 18: "?key=SECRET") being printed as it is.
func TestMaskURLHidesQueryValues(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://pbs.example/openrtb2/auction?key=SECRET", "https://pbs.example/openrtb2/auction?key=xxxxx"},
		{"https://pbs.example/a?key=SECRET&account=12&flag", "https://pbs.example/a?key=xxxxx&account=xxxxx&xxxxx"},
		{"https://pbs.example/a?SECRET", "https://pbs.example/a?xxxxx"},
		{"https://pbs.example/a#SECRET", "https://pbs.example/a#xxxxx"},
		{"https://tok@pbs.example/a?k=SECRET", "https://xxxxx@pbs.example/a?k=xxxxx"},
		{"https://pbs.example/a", "https://pbs.example/a"},
		{"https://pbs.example/a?key=%zzSECRET", "https://pbs.example/a?key=xxxxx"},
		{"https://pbs.example:port/a?key=SECRET", "xxxxx"}, // does not parse
		{"https://pbs.example/a?", "https://pbs.example/a?"},
	} {
		if got := maskURL(tt.in); got != tt.want {
			t.Errorf("maskURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWriteEffectiveMasksEveryURL catches a configured URL printed with
// its query values by config check, and the masking changing the
// configuration the daemon runs with.
func TestWriteEffectiveMasksEveryURL(t *testing.T) {
	c := Defaults()
	c.Publisher.Domain = "www.pub.example"
	c.Publisher.OriginURL = "https://origin.example"
	c.Auction.OpenRTB = []OpenRTBEndpoint{
		{Name: "a", URL: "https://pbs.example/openrtb2/auction?key=SECRET1", Headers: map[string]string{"X-Key": "SECRET2"}},
		{Name: "b", URL: "https://other.example/bid?token=SECRET3&v=2"},
	}
	var out bytes.Buffer
	if err := c.WriteEffective(&out); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"SECRET1", "SECRET2", "SECRET3"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("config check output carries %s:\n%s", secret, out.String())
		}
	}
	for _, want := range []string{"auction?key=xxxxx", "bid?token=xxxxx&v=xxxxx", "origin_url = 'https://origin.example'"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("config check output lacks %q:\n%s", want, out.String())
		}
	}
	if c.Auction.OpenRTB[0].URL != "https://pbs.example/openrtb2/auction?key=SECRET1" || c.Auction.OpenRTB[0].Headers["X-Key"] != "SECRET2" {
		t.Errorf("WriteEffective changed the configuration: %+v", c.Auction.OpenRTB[0])
	}
}

// TestLogReplacerMasksURLsAsLogLinesQuoteThem: the HTTP client's error
// quotes the URL as Go prints it; the replacer masks that form, the
// configured form and the bare query.
func TestLogReplacerMasksURLsAsLogLinesQuoteThem(t *testing.T) {
	c := Defaults()
	c.Publisher.OriginURL = "https://origin.example"
	c.Auction.OpenRTB = []OpenRTBEndpoint{{Name: "a", URL: "https://pbs.example/openrtb2/auction?key=SECRET"}}
	r := c.LogReplacer()
	if r == nil {
		t.Fatal("no replacer for a URL with a query")
	}
	for _, line := range []string{
		`Post "https://pbs.example/openrtb2/auction?key=SECRET": dial tcp: connection refused`,
		`endpoint https://pbs.example/openrtb2/auction?key=SECRET`,
		`query ?key=SECRET`,
	} {
		if got := r.Replace(line); strings.Contains(got, "SECRET") || !strings.Contains(got, "key=xxxxx") {
			t.Errorf("Replace(%q) = %q", line, got)
		}
	}
	c.Auction.OpenRTB[0].URL = "https://pbs.example/openrtb2/auction"
	if c.LogReplacer() != nil {
		t.Error("a replacer for a configuration without secrets in its URLs")
	}
}
