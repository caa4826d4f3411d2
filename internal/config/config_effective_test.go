package config

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestWriteEffectiveMasksCredentials(t *testing.T) {
	tests := []struct {
		origin   string
		want     string
		mustHide string
	}{
		{"https://user:s3cret@origin.example.com", `origin_url = 'https://user:xxxxx@origin.example.com'`, "s3cret"},
		{"https://t0ken@origin.example.com/", `origin_url = 'https://xxxxx@origin.example.com/'`, "t0ken"},
		{"https://origin.example.com", `origin_url = 'https://origin.example.com'`, ""},
		{"https://user:s3cret@origin.example.com:bad", `origin_url = 'xxxxx'`, "s3cret"},
	}
	for _, tt := range tests {
		c := valid()
		c.Publisher.OriginURL = tt.origin
		var buf bytes.Buffer
		if err := c.WriteEffective(&buf); err != nil {
			t.Fatalf("WriteEffective: %v", err)
		}
		out := buf.String()
		if !strings.Contains(out, tt.want) {
			t.Errorf("origin %q: output lacks %s:\n%s", tt.origin, tt.want, out)
		}
		if tt.mustHide != "" && strings.Contains(out, tt.mustHide) {
			t.Errorf("origin %q: output leaks %q", tt.origin, tt.mustHide)
		}
		if c.Publisher.OriginURL != tt.origin {
			t.Errorf("WriteEffective modified the config: origin_url = %q", c.Publisher.OriginURL)
		}
	}
}

func TestValidationErrorsMaskCredentials(t *testing.T) {
	for _, origin := range []string{
		"https://user:s3cret@o.example/path",
		"ftp://user:s3cret@o.example",
		"https://user:s3cret@o.example:port",
	} {
		c := valid()
		c.Publisher.OriginURL = origin
		err := c.Validate()
		if err == nil {
			t.Errorf("%q: Validate succeeded, want an error", origin)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error leaks the password: %v", origin, err)
		}
	}
}

func TestWriteEffectiveRoundTrips(t *testing.T) {
	c, err := Load(writeFile(t, fullTOML), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var buf bytes.Buffer
	if err := c.WriteEffective(&buf); err != nil {
		t.Fatalf("WriteEffective: %v", err)
	}
	out := buf.String()
	for _, w := range []string{"shutdown_timeout = '0s'", "read_timeout = '1m0s'", "[[creative_opportunities.slot]]", "[[auction.static_bids]]"} {
		if !strings.Contains(out, w) {
			t.Errorf("effective config lacks %s:\n%s", w, out)
		}
	}
	again, err := Load(writeFile(t, out), nil)
	if err != nil {
		t.Fatalf("reloading the effective config: %v\n%s", err, out)
	}
	// Only the masked password may differ.
	again.Publisher.OriginURL = c.Publisher.OriginURL
	again.Publisher.Origin = c.Publisher.Origin
	for i := range again.CreativeOpportunities.Slots {
		again.CreativeOpportunities.Slots[i].Patterns = c.CreativeOpportunities.Slots[i].Patterns
	}
	if !reflect.DeepEqual(again, c) {
		t.Errorf("reloaded effective config differs:\n got %+v\nwant %+v", again, c)
	}

	var empty bytes.Buffer
	if err := valid().WriteEffective(&empty); err != nil {
		t.Fatalf("WriteEffective(defaults): %v", err)
	}
	if _, err := Load(writeFile(t, empty.String()), nil); err != nil {
		t.Errorf("effective defaults do not reload: %v\n%s", err, empty.String())
	}
}
