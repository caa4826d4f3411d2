package main

import (
	"strings"
	"testing"
)

// TestServeAndCheckRefuseOriginThatIsTheListener catches a configuration
// whose origin_url is ssatd's own listener passing config check and
// starting serve; one request then looped thousands of times.
func TestServeAndCheckRefuseOriginThatIsTheListener(t *testing.T) {
	path := writeConfig(t, `
[server]
listen = "0.0.0.0:18080"
admin_listen = "127.0.0.1:18081"

[publisher]
domain = "www.example.com"
origin_url = "http://localhost:18080"
`)
	for _, cmd := range [][]string{{"config", "check"}, {"serve"}} {
		got := invoke(t, append(cmd, "-config", path), nil)
		if got.code != 1 || !strings.Contains(got.stderr, "publisher.origin_url") || !strings.Contains(got.stderr, "own server.listen") {
			t.Errorf("%s: exit %d, stderr %q; want 1 naming publisher.origin_url", strings.Join(cmd, " "), got.code, got.stderr)
		}
	}
}

// TestConfigCheckRefusesListenEqualToAdminListen catches listen and
// admin_listen on the same socket passing config check, after which serve
// failed to bind.
func TestConfigCheckRefusesListenEqualToAdminListen(t *testing.T) {
	path := writeConfig(t, `
[server]
listen = ":19090"
admin_listen = "127.0.0.1:19090"

[publisher]
domain = "www.example.com"
origin_url = "http://127.0.0.1:8000"
`)
	got := invoke(t, []string{"config", "check", "-config", path}, nil)
	if got.code != 1 || !strings.Contains(got.stderr, "server.admin_listen") {
		t.Errorf("exit %d, stderr %q; want 1 naming server.admin_listen", got.code, got.stderr)
	}
}
