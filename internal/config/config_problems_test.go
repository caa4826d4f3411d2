package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestUnknownKeysReportKeyAndLine(t *testing.T) {
	doc := `[server]
listen = ":8080"
lisen = ":8081"

[publisher]
domain = "www.example.com"
origin_url = "https://origin.example.com"

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/"]
colour = "red"

[nonsense]
x = 1
`
	_, err := Load(writeFile(t, doc), nil)
	if err == nil {
		t.Fatal("Load succeeded, want unknown key errors")
	}
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error is %T, want *Errors", err)
	}
	want := []string{
		`line 3: server.lisen: unknown key; did you mean "server.listen"?`,
		`line 12: creative_opportunities.slot[0].colour: unknown key`,
		`line 14: nonsense: unknown table`,
	}
	if len(errs.List) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(errs.List), len(want), err)
	}
	for i, w := range want {
		if errs.List[i].Error() != w {
			t.Errorf("problem %d = %q, want %q", i, errs.List[i], w)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"string for int", "[server]\nmax_header_bytes = \"big\"\n", []string{`line 2: server.max_header_bytes: found the string "big", wants an integer`}},
		{"int for bool", "[debug]\n\ndiagnostics_headers = 1\n", []string{"line 3: debug.diagnostics_headers: found the integer 1, wants true or false"}},
		{"bad duration string", "[publisher]\norigin_idle_timeout = \"soon\"\n", []string{`line 2: publisher.origin_idle_timeout: found "soon", wants a duration`, `"15s"`}},
		{"integer duration", "[server]\nread_timeout = 30\n", []string{`line 2: server.read_timeout: found the integer 30, wants a duration string with a unit, such as "15s"`}},
		{"float for int", "[auction]\ntimeout_ms = 1.5\n", []string{"line 2: auction.timeout_ms: found the number 1.5, wants an integer"}},
		{"table for string", "[server]\nlisten = { a = 1 }\n", []string{"line 2: server.listen: found a table, wants a string"}},
		{"string for array", "[bots]\nuser_agents = \"x\"\n", []string{`line 2: bots.user_agents: found the string "x", wants an array of strings`}},
		{"element of array", "[publisher]\nallowed_hosts = [\n  \"a.example\",\n  7,\n]\n", []string{"line 4: publisher.allowed_hosts[1]: found the integer 7, wants a string"}},
		{"inline table key", "[[creative_opportunities.slot]]\nid = \"a\"\npage_patterns = [\"/\"]\ntargeting = { pos = \"x\" }\n[creative_opportunities.slot.targeting2]\n", []string{`line 5: creative_opportunities.slot[0].targeting2: unknown table; did you mean "creative_opportunities.slot[0].targeting"?`}},
		{"section outside its table", "domain = \"www.example.com\"\n", []string{`line 1: domain: unknown key; did you mean "publisher.domain"?`}},
		{"syntax", "[server\nlisten = 1\n", []string{"line 1, column"}},
		{"duplicate key", "[server]\nlisten = \":1\"\nlisten = \":2\"\n", []string{"line 3"}},
	}
	for _, tt := range tests {
		_, err := Load(writeFile(t, tt.doc), nil)
		if err == nil {
			t.Errorf("%s: Load succeeded, want an error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %s", tt.name, err, w)
			}
		}
	}
}

func TestTypeErrorsDoNotStopTheOtherChecks(t *testing.T) {
	doc := `[server]
listn = ":8080"
shutdown_timeout = 15

[publisher]
domain = "www.example.com"
origin_url = "https://origin.example.com"

[compression]
gzip_level = 0

[auction]
timeout_ms = "500ms"

[[creative_opportunities.slot]]
id = 5
page_patterns = ["/"]
`
	_, err := Load(writeFile(t, doc), []string{"SSATD_DELIVERY_MIN_SIZE=lots"})
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load error = %v (%T), want *Errors", err, err)
	}
	// The slot id of the wrong type is reported once: not also as a
	// missing id by Validate, which only saw the default left in place.
	want := []string{
		`line 2: server.listn: unknown key; did you mean "server.listen"?`,
		`line 3: server.shutdown_timeout: found the integer 15, wants a duration string with a unit, such as "15s", "500ms" or "1m30s"`,
		`line 13: auction.timeout_ms: found the string "500ms", wants an integer`,
		`line 16: creative_opportunities.slot[0].id: found the integer 5, wants a string`,
		`SSATD_DELIVERY_MIN_SIZE: delivery.min_size: found "lots", wants an integer`,
		`line 10: compression.gzip_level: must be between 1 and 9, got 0`,
	}
	if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}

func TestValidationProblemsNameTheirSource(t *testing.T) {
	doc := `[server]
listen = "nope"

[publisher]
domain = "www.example.com"
`
	_, err := Load(writeFile(t, doc), []string{"SSATD_PUBLISHER_ORIGIN_URL=ftp://x"})
	want := []string{
		`line 2: server.listen: must be host:port or :port`,
		`SSATD_PUBLISHER_ORIGIN_URL: publisher.origin_url: scheme must be http or https`,
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not contain %q", err, w)
		}
	}
}

// TestProblemsNameNoGoInternals: every problem speaks in the file's terms,
// never in Go's (package names, struct fields, parse functions).
func TestProblemsNameNoGoInternals(t *testing.T) {
	doc := `[server]
listen = "nope"
admin_listen = "1.2.3.4:x"
shutdown_timeout = 15
read_timeout = "soon"
trusted_proxies = ["10.0.0.0/99", "fe80::1%eth0", "x"]
max_header_bytes = "big"

[publisher]
domain = "a:b:c"
origin_url = "http://[::1"
allowed_hosts = ["ok.example", 3]

[auction]
timeout_ms = "500ms"
enabled = "yes"
static_bids = 3
`
	environ := []string{"SSATD_DELIVERY_MIN_SIZE=lots", "SSATD_DELIVERY_ZSTD=maybe", "SSATD_SERVER_IDLE_TIMEOUT=15"}
	_, err := Load(writeFile(t, doc), environ)
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load error = %v, want *Errors", err)
	}
	leaks := []string{"strconv", "netip.", "time:", "cannot decode", "struct field", "config.", "of type", "toml:", "ParseInt", "invalid syntax"}
	for _, e := range errs.List {
		msg := e.Error()
		for _, l := range leaks {
			if strings.Contains(msg, l) {
				t.Errorf("problem %q mentions %q", msg, l)
			}
		}
		if !strings.HasPrefix(msg, "line ") && !strings.HasPrefix(msg, "SSATD_") {
			t.Errorf("problem %q does not say where the key was set", msg)
		}
	}
	if len(errs.List) < 14 {
		t.Errorf("got %d problems, want every one of them:\n%v", len(errs.List), err)
	}
}
