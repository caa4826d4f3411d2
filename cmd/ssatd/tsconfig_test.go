package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// tsFile is a Trusted Server settings file (upstream's format) with
// secrets that must never be printed.
const tsFile = `[[handlers]]
path = "^/_ts/admin"
username = "ops"
password = "handler-password-SECRET-0123456789abcdef"

[publisher]
domain = "news.test"
cookie_domain = ".news.test"
origin_url = "http://127.0.0.1:8000"
proxy_secret = "proxy-secret-SECRET-0123456789abcdef"

[ec]
passphrase = "ec-passphrase-SECRET-0123456789abcdef"

[auction]
enabled = true
providers = ["prebid"]

[integrations.prebid]
server_url = "http://127.0.0.1:8001"
bidders = ["alpha"]

[creative_opportunities]
gam_network_id = "123"
auction_timeout_ms = 800

[[creative_opportunities.slot]]
id = "atf"
page_patterns = ["/**"]
formats = [{ width = 300, height = 250 }]
`

func TestConfigCheckReadsATrustedServerFile(t *testing.T) {
	tests := []struct {
		name       string
		doc        string
		args       []string
		environ    []string
		wantCode   int
		wantStdout []string
		wantStderr []string
		notStderr  []string
	}{
		{name: "detected", doc: tsFile, wantCode: 0,
			wantStdout: []string{"(format: trusted-server, mapped onto ssatd's settings)", "url = 'http://127.0.0.1:8001/openrtb2/auction'", "timeout_ms = 800", "post_auction_timeout_ms = 2000", "gam_unit_path = '/123/atf'"},
			wantStderr: []string{
				"ec.passphrase is set but there is no store",
				"accepted, not emulated: [integrations.prebid]: only the server-side auction is emulated",
			},
			// The first-party routes and creative rewriting are served.
			notStderr: []string{"[publisher.proxy_secret]", "[auction.rewrite_creatives]"}},
		{name: "native file says so", doc: "[publisher]\ndomain = \"a.test\"\norigin_url = \"http://127.0.0.1:8000\"\n", wantCode: 0,
			wantStdout: []string{"(format: ssatd)"}, notStderr: []string{"accepted, not emulated"}},
		{name: "misspelt key", doc: strings.Replace(tsFile, "gam_network_id", "gam_network", 1), wantCode: 1,
			wantStderr: []string{`creative_opportunities.gam_network: unknown key; did you mean "creative_opportunities.gam_network_id"?`}},
		{name: "environment", doc: tsFile, environ: []string{"TRUSTED_SERVER__INTEGRATIONS__PREBID__SERVER_URL=http://127.0.0.1:9009/openrtb2/auction/"},
			wantStdout: []string{"url = 'http://127.0.0.1:9009/openrtb2/auction'"}},
		{name: "chosen format", doc: "[publisher]\ndomain = \"a.test\"\norigin_url = \"http://127.0.0.1:8000\"\n", args: []string{"-config-format", "trusted-server"}, wantCode: 1,
			wantStderr: []string{"publisher.proxy_secret: is required by Trusted Server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"config", "check", "-config", writeConfig(t, tt.doc)}, tt.args...)
			got := invoke(t, args, tt.environ)
			if got.code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", got.code, tt.wantCode, got.stderr)
			}
			for _, w := range tt.wantStdout {
				if !strings.Contains(got.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, got.stdout)
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(got.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, got.stderr)
				}
			}
			for _, w := range tt.notStderr {
				if strings.Contains(got.stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, got.stderr)
				}
			}
			if strings.Contains(got.stdout+got.stderr, "SECRET") {
				t.Errorf("a secret is shown:\n%s\n%s", got.stdout, got.stderr)
			}
		})
	}
}

// serve of a Trusted Server file logs one line per section it accepts and
// does not emulate, and /metrics counts them.
func TestServeTrustedServerFileLogsWhatIsNotEmulated(t *testing.T) {
	origin := newTestOrigin(t)
	doc := strings.Replace(tsFile, "http://127.0.0.1:8000", origin.srv.URL, 1) + `
[ssatd.server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
drain_period = "0s"
`
	sc := startServeCommand(t, doc)
	logs := sc.stderr.String()
	var keys []string
	sc2 := bufio.NewScanner(strings.NewReader(logs))
	for sc2.Scan() {
		var m map[string]any
		if json.Unmarshal(sc2.Bytes(), &m) == nil && m["msg"] == "accepted, not emulated" {
			k, _ := m["key"].(string)
			keys = append(keys, k)
		}
	}
	want := []string{"integrations.prebid"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("accepted-not-emulated lines for %q, want %q", keys, want)
	}
	if strings.Contains(logs, "SECRET") {
		t.Errorf("a secret is logged:\n%s", logs)
	}
	c := newTestClient(t)
	_, _, body := get(t, c, "http://"+sc.adminAddr+"/metrics", "")
	if !strings.Contains(body, "\nssatd_config_not_emulated 1\n") {
		t.Errorf("/metrics lacks ssatd_config_not_emulated 1")
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
}

func TestConfigConvertWritesTheNativeFile(t *testing.T) {
	got := invoke(t, []string{"config", "convert", "-config", writeConfig(t, tsFile)}, nil)
	if got.code != 0 {
		t.Fatalf("exit %d\n%s", got.code, got.stderr)
	}
	m := effective(t, got.stdout)
	for key, want := range map[string]any{
		"publisher.domain":                "news.test",
		"auction.timeout_ms":              int64(800),
		"auction.post_auction_timeout_ms": int64(2000),
		"consent.policy":                  "upstream",
	} {
		if v, ok := lookup(m, key); !ok || v != want {
			t.Errorf("%s = %#v, want %#v\n%s", key, v, want, got.stdout)
		}
	}
	if _, ok := lookup(m, "server"); ok {
		t.Errorf("defaults written:\n%s", got.stdout)
	}
	for _, dropped := range []string{"left out (secret): [ec]: the passphrase and the partners' api_token are secrets",
		"dropped (no native key): publisher.proxy_secret"} {
		if !strings.Contains(got.stderr, dropped) {
			t.Errorf("stderr does not say %q was dropped:\n%s", dropped, got.stderr)
		}
	}
	// The [[handlers]] credentials are the converted file's own keys, to
	// ask them as the Trusted Server file did; no other secret is written.
	handlerPassword := "password = 'handler-password-SECRET-0123456789abcdef'"
	if !strings.Contains(got.stdout, handlerPassword) {
		t.Errorf("the handler's password is not in the converted file:\n%s", got.stdout)
	}
	if strings.Contains(strings.Replace(got.stdout, handlerPassword, "", 1)+got.stderr, "SECRET") {
		t.Errorf("a secret is written:\n%s\n%s", got.stdout, got.stderr)
	}
	native := invoke(t, []string{"config", "convert", "-config", writeConfig(t, got.stdout)}, nil)
	if native.code != 1 || !strings.Contains(native.stderr, "is already in ssatd's format") {
		t.Errorf("converting a native file: exit %d\n%s", native.code, native.stderr)
	}
}

// TestConfigCommandsTakeTheFileAsTheirArgument: `ssatd config convert
// FILE` and `ssatd config check FILE`, as the issue and a shell user
// write them, read FILE as -config FILE; a second file is refused.
func TestConfigCommandsTakeTheFileAsTheirArgument(t *testing.T) {
	path := writeConfig(t, tsFile)
	for _, args := range [][]string{
		{"config", "convert", path},
		{"config", "convert", "-config-format", "trusted-server", path},
		{"config", "check", path},
		{"config", "check", path, "-config-format", "trusted-server"},
	} {
		if got := invoke(t, args, nil); got.code != 0 || !strings.Contains(got.stdout, "news.test") {
			t.Errorf("%q: exit %d\n%s%s", args, got.code, got.stdout, got.stderr)
		}
	}
	for _, args := range [][]string{{"config", "check", path, path}, {"config", "convert", "-config", path, path}, {"config", "check", "--config=" + path, path}} {
		if got := invoke(t, args, nil); got.code != 2 || !strings.Contains(got.stderr, "unexpected argument") {
			t.Errorf("%q: exit %d\n%s", args, got.code, got.stderr)
		}
	}
}
