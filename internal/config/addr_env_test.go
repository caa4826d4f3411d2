package config

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validateErr runs Validate on valid() changed by mutate and returns the
// error text ("" when valid).
func validateErr(t *testing.T, mutate func(*Config)) string {
	t.Helper()
	c := valid()
	mutate(c)
	if err := c.Validate(); err != nil {
		return err.Error()
	}
	return ""
}

// TestOriginURLCredentialsRejected catches credentials in origin_url being
// accepted: ssatd never sent them, and serve printed them in its start-up
// line.
func TestOriginURLCredentialsRejected(t *testing.T) {
	for _, origin := range []string{"https://user:s3cret@origin.example.com", "https://s3cret@origin.example.com/", "http://user:@origin.example.com:8000"} {
		msg := validateErr(t, func(c *Config) { c.Publisher.OriginURL = origin })
		if !strings.Contains(msg, "publisher.origin_url: must not contain credentials") {
			t.Errorf("%s: got %q, want the key and the reason", origin, msg)
		}
		if strings.Contains(msg, "s3cret") {
			t.Errorf("%s: the error leaks the secret: %s", origin, msg)
		}
	}
}

// TestOriginPointingAtListenerRejected catches an origin_url that is
// ssatd's own listener passing validation: every request would loop back
// into ssatd until file descriptors ran out.
func TestOriginPointingAtListenerRejected(t *testing.T) {
	tests := []struct {
		listen, origin string
		loop           bool
	}{
		{":8080", "http://127.0.0.1:8080", true},
		{":8080", "http://localhost:8080/", true},
		{":8080", "http://LOCALHOST:8080", true},
		{":8080", "http://0.0.0.0:8080", true},
		{":8080", "http://[::1]:8080", true},
		{"0.0.0.0:8080", "http://127.0.0.1:8080", true},
		{"[::]:8080", "http://localhost:8080", true},
		{"127.0.0.1:8080", "http://localhost:8080", true},
		{"localhost:8080", "http://127.0.0.1:8080", true},
		{"127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"10.0.0.5:8080", "http://10.0.0.5:8080", true},
		{"proxy.internal:8080", "http://Proxy.Internal:8080", true},
		{":80", "http://127.0.0.1", true},
		{":443", "https://localhost/", true},
		{":8080", "http://127.0.0.1:8081", false},
		{":8080", "https://127.0.0.1", false},
		{"127.0.0.1:8080", "http://127.0.0.2:8080", false},
		{"127.0.0.1:8080", "http://10.0.0.5:8080", false},
		{"10.0.0.5:8080", "http://10.0.0.6:8080", false},
		{":8080", "http://origin.example.com:8080", false},
		{"127.0.0.1:0", "http://127.0.0.1:0", false},
	}
	for _, tt := range tests {
		msg := validateErr(t, func(c *Config) { c.Server.Listen, c.Publisher.OriginURL = tt.listen, tt.origin })
		got := strings.Contains(msg, "publisher.origin_url:") && strings.Contains(msg, "own server.listen")
		if got != tt.loop {
			t.Errorf("listen %q, origin %q: refused %v, want %v (%q)", tt.listen, tt.origin, got, tt.loop, msg)
		}
	}
}

// TestListenEqualsAdminListenRejected catches server.listen and
// server.admin_listen claiming the same socket passing config check, after
// which serve failed to bind.
func TestListenEqualsAdminListenRejected(t *testing.T) {
	const byListen, byAdmin = "server.listen: ", "server.admin_listen: "
	tests := []struct {
		listen, admin string
		key           string // the key the clash is reported under; "" for none
	}{
		// admin_listen left at its default: server.listen was the key set.
		{":9090", "127.0.0.1:9090", byListen},
		{"127.0.0.1:9090", "127.0.0.1:9090", byListen},
		{"0.0.0.0:8080", "[::]:8080", byAdmin},
		{"localhost:9000", "127.0.0.1:9000", byAdmin},
		{"10.0.0.5:9000", ":9000", byAdmin},
		{"10.0.0.5:9000", "0.0.0.0:09000", byAdmin},
		// server.listen left at its default: admin_listen was the key set.
		{":8080", "127.0.0.1:8080", byAdmin},
		{":8080", "127.0.0.1:9090", ""},
		{"127.0.0.1:9090", "127.0.0.2:9090", ""},
		{"10.0.0.5:9000", "127.0.0.1:9000", ""},
		{"127.0.0.1:0", "127.0.0.1:0", ""},
	}
	for _, tt := range tests {
		msg := validateErr(t, func(c *Config) { c.Server.Listen, c.Server.AdminListen = tt.listen, tt.admin })
		clash := strings.Contains(msg, "uses the same port as server.")
		if !clash {
			if tt.key != "" {
				t.Errorf("listen %q, admin_listen %q: not refused, want it under %q (%q)", tt.listen, tt.admin, tt.key, msg)
			}
			continue
		}
		if tt.key == "" || !strings.Contains(msg, tt.key) {
			t.Errorf("listen %q, admin_listen %q: refused as %q, want it under %q", tt.listen, tt.admin, msg, tt.key)
		}
	}
}

// TestListenOnDefaultAdminPortNamesListen catches config check reporting a
// server.listen set onto the default admin port under server.admin_listen
// at the [server] header, a key and a line the operator never wrote.
func TestListenOnDefaultAdminPortNamesListen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ssatd.toml")
	data := "[publisher]\ndomain = \"www.example.com\"\norigin_url = \"http://origin.example.com\"\n\n[server]\nlisten = \"127.0.0.1:9090\"\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, nil)
	if err == nil {
		t.Fatal("listen on the default admin port was accepted")
	}
	msg := err.Error()
	if !strings.Contains(msg, "line 6: server.listen: \"127.0.0.1:9090\" uses the same port as server.admin_listen") {
		t.Fatalf("want the clash at line 6 under server.listen, got %q", msg)
	}
	if strings.Contains(msg, "server.admin_listen:") {
		t.Fatalf("the clash is also reported under server.admin_listen: %q", msg)
	}
}

// TestOriginHostDropsDefaultPort checks the host the rewriter matches: an
// explicit default port is dropped so that links with and without it match.
func TestOriginHostDropsDefaultPort(t *testing.T) {
	for origin, want := range map[string]string{
		"https://Origin.example:443/": "origin.example",
		"http://origin.example:80":    "origin.example",
		"https://origin.example:80":   "origin.example:80",
		"http://origin.example:443":   "origin.example:443",
		"http://[::1]:80":             "[::1]",
	} {
		c := valid()
		c.Publisher.OriginURL = origin
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", origin, err)
		}
		if c.Publisher.OriginHost != want {
			t.Errorf("%s: OriginHost = %q, want %q", origin, c.Publisher.OriginHost, want)
		}
	}
}

// TestUnknownEnvVariableRejected catches SSATD_ variables that name no key
// being ignored silently while unknown TOML keys are errors.
func TestUnknownEnvVariableRejected(t *testing.T) {
	path := writeFile(t, minimalTOML)
	_, err := Load(path, []string{"SSATD_SERVER_LISTN=:9999", "SSATD_PUBLISHER_ORIGINURL=http://x.example"})
	if err == nil {
		t.Fatal("Load accepted misspelt variables")
	}
	for _, want := range []string{
		"SSATD_SERVER_LISTN: unknown variable; did you mean SSATD_SERVER_LISTEN?",
		"SSATD_PUBLISHER_ORIGINURL: unknown variable; did you mean SSATD_PUBLISHER_ORIGIN_URL?",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// The command line's own variables, the test suite's, and anything
	// without the prefix are not configuration keys and pass.
	if _, err := Load(path, []string{"SSATD_CONFIG=" + path, "SSATD_LOG_LEVEL=debug", "SSATD_LOG_FORMAT=console",
		"SSATD_CORPUS=/x", "SSATD_FUZZTIME=1s", "SSATD_SCREENSHOTS=/y", "SSATD_STRICT=1", "HOME=/root", "ssatd_lower=1"}); err != nil {
		t.Errorf("Load refused variables that are not configuration keys: %v", err)
	}
}

// TestEnvIntegersBeyond32Bits catches integer overrides being parsed as
// 32-bit values while TOML accepts the whole range of the key's type.
func TestEnvIntegersBeyond32Bits(t *testing.T) {
	path := writeFile(t, minimalTOML)
	c, err := Load(path, []string{"SSATD_DELIVERY_MIN_SIZE=4294967296", "SSATD_AUCTION_TIMEOUT_MS=3000000000",
		"SSATD_SERVER_MAX_HEADER_BYTES=2147483648"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Delivery.MinSize != 1<<32 || c.Auction.TimeoutMS != 3000000000 || c.Server.MaxHeaderBytes != 1<<31 {
		t.Errorf("min_size %d, timeout_ms %d, max_header_bytes %d", c.Delivery.MinSize, c.Auction.TimeoutMS, c.Server.MaxHeaderBytes)
	}
	_, err = Load(path, []string{"SSATD_DELIVERY_MIN_SIZE=9223372036854775808"})
	if err == nil || !strings.Contains(err.Error(), "SSATD_DELIVERY_MIN_SIZE: delivery.min_size: found") {
		t.Errorf("a value beyond int64: got %v, want an error naming the variable and key", err)
	}
}

// TestOriginForLogMasksCredentials checks the start-up log's view of the
// origin, which serve printed with the password in clear: masked even for
// a Config that never went through Validate.
func TestOriginForLogMasksCredentials(t *testing.T) {
	c := valid()
	c.Publisher.OriginURL = "https://user:s3cret@origin.example.com:8443"
	if got := c.Publisher.OriginForLog(); strings.Contains(got, "s3cret") || !strings.Contains(got, "origin.example.com:8443") {
		t.Errorf("OriginForLog before Validate = %q", got)
	}
	c.Publisher.Origin, _ = url.Parse(c.Publisher.OriginURL)
	if got := c.Publisher.OriginForLog(); got != "https://user:xxxxx@origin.example.com:8443" {
		t.Errorf("OriginForLog = %q, want the password masked", got)
	}
}
