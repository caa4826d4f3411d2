package main

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// result is what one invocation of run produced.
type result struct {
	code           int
	stdout, stderr string
}

// invoke runs the command line with a context that is already cancelled, so
// that a command which unexpectedly starts serving returns at once instead
// of hanging the test.
func invoke(t *testing.T, args []string, environ []string) result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr, environ)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// writeConfig writes a configuration file into a fresh temporary folder.
func writeConfig(t testing.TB, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ssatd.toml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// effective parses the TOML that config check prints, so assertions look at
// values rather than at the encoder's quoting style.
func effective(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := toml.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("config check output is not valid TOML: %v\n%s", err, stdout)
	}
	return m
}

// lookup returns the value at a dotted key such as "publisher.domain".
func lookup(m map[string]any, key string) (any, bool) {
	var cur any = m
	for _, part := range strings.Split(key, ".") {
		tbl, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = tbl[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

const validConfig = `
[server]
listen = "127.0.0.1:18080"

[publisher]
domain = "www.example.com"
origin_url = "http://127.0.0.1:8000"

[auction]
enabled = true

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/**"]
`

func TestRunCommandLine(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string // substrings of stdout
		wantStderr []string // substrings of stderr
	}{
		{name: "version", args: []string{"version"}, wantStdout: []string{"ssatd " + version + " commit "}},
		{name: "--version", args: []string{"--version"}, wantStdout: []string{"ssatd " + version + " commit "}},
		{name: "help", args: []string{"help"}, wantStdout: []string{"usage: ssatd", "SSATD_CONFIG"}},
		{name: "no arguments", args: nil, wantCode: 2, wantStderr: []string{"usage: ssatd <command>"}},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 2,
			wantStderr: []string{`unknown command "frobnicate"`, "usage: ssatd <command>"}},
		{name: "config without sub-command", args: []string{"config"}, wantCode: 2,
			wantStderr: []string{`the sub-commands are "check" and "convert"`, "usage: ssatd <command>"}},
		{name: "config with unknown sub-command", args: []string{"config", "validate"}, wantCode: 2,
			wantStderr: []string{`the sub-commands are "check" and "convert"`, "usage: ssatd <command>"}},
		{name: "serve unknown flag", args: []string{"serve", "-bogus"}, wantCode: 2,
			wantStderr: []string{"-bogus", "usage: ssatd serve -config FILE"}},
		{name: "config check unknown flag", args: []string{"config", "check", "-bogus"}, wantCode: 2,
			wantStderr: []string{"-bogus", "usage: ssatd config check -config FILE"}},
		{name: "serve extra argument", args: []string{"serve", "-config", "x.toml", "extra"}, wantCode: 2,
			wantStderr: []string{`unexpected argument "extra"`, "usage: ssatd serve -config FILE"}},
		{name: "config check extra argument", args: []string{"config", "check", "-config", "x.toml", "extra"}, wantCode: 2,
			wantStderr: []string{`unexpected argument "extra"`, "usage: ssatd config check -config FILE"}},
		{name: "demo extra argument", args: []string{"demo", "extra"}, wantCode: 2,
			wantStderr: []string{`ssatd demo: unexpected argument "extra"`, "usage: ssatd demo [flags]"}},
		{name: "demo-origin extra argument", args: []string{"demo-origin", "extra"}, wantCode: 2,
			wantStderr: []string{`ssatd demo-origin: unexpected argument "extra"`, "usage: ssatd demo-origin"}},
		{name: "demo-bidder extra argument", args: []string{"demo-bidder", "extra"}, wantCode: 2,
			wantStderr: []string{`ssatd demo-bidder: unexpected argument "extra"`, "usage: ssatd demo-bidder"}},
		{name: "healthcheck extra argument", args: []string{"healthcheck", "extra"}, wantCode: 2,
			wantStderr: []string{`ssatd healthcheck: unexpected argument "extra"`, "usage: ssatd healthcheck"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := invoke(t, tt.args, nil)
			if got.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d\nstdout: %s\nstderr: %s", got.code, tt.wantCode, got.stdout, got.stderr)
			}
			for _, s := range tt.wantStdout {
				if !strings.Contains(got.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, got.stdout)
				}
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(got.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, got.stderr)
				}
			}
			// Success talks on stdout only; usage errors on stderr only.
			if tt.wantCode == 0 && got.stderr != "" {
				t.Errorf("stderr = %q, want empty", got.stderr)
			}
			if tt.wantCode != 0 && got.stdout != "" {
				t.Errorf("stdout = %q, want empty", got.stdout)
			}
		})
	}
}

// TestHelpExitsZeroEverywhere: `ssatd -h` and every sub-command's -h
// answer on stdout with status 0; the commands that read the configuration
// also explain the environment overrides.
func TestHelpExitsZeroEverywhere(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-h"}, []string{"usage: ssatd <command>", "SSATD_<SECTION>_<KEY>"}},
		{[]string{"serve", "-h"}, []string{"usage: ssatd serve -config FILE", "SSATD_<SECTION>_<KEY>", "SSATD_CONFIG"}},
		{[]string{"serve", "--help"}, []string{"usage: ssatd serve -config FILE"}},
		{[]string{"config", "check", "-h"}, []string{"usage: ssatd config check -config FILE", "SSATD_<SECTION>_<KEY>"}},
		{[]string{"measure", "-h"}, []string{"ssatd measure -pages DIR"}},
		{[]string{"demo", "-h"}, []string{"usage: ssatd demo"}},
		{[]string{"demo-origin", "-h"}, []string{"usage: ssatd demo-origin", "-prefer"}},
		{[]string{"demo-bidder", "-h"}, []string{"usage: ssatd demo-bidder", "-failure-rate"}},
		{[]string{"healthcheck", "-h"}, []string{"usage: ssatd healthcheck"}},
	}
	for _, tt := range tests {
		got := invoke(t, tt.args, nil)
		if got.code != 0 || got.stderr != "" {
			t.Errorf("%q: exit code %d, stderr %q; want 0 and nothing on stderr", tt.args, got.code, got.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(got.stdout, w) {
				t.Errorf("%q: stdout lacks %q:\n%s", tt.args, w, got.stdout)
			}
		}
	}
}

func TestVersionLine(t *testing.T) {
	defer func(c, d string) { commit, date = c, d }(commit, date)
	commit, date = "0123abc", "2026-11-30T12:00:00Z"
	if got, want := versionLine(), "ssatd "+version+" commit 0123abc date 2026-11-30T12:00:00Z"; got != want {
		t.Errorf("with ldflags: %q, want %q", got, want)
	}
	// A test binary carries no VCS stamp, so without ldflags both fields
	// fall back to the build info and, lacking it, say so.
	commit, date = "", ""
	rev, when := vcsStamp()
	want := "ssatd " + version + " commit " + orUnknown(rev) + " date " + orUnknown(when)
	if got := versionLine(); got != want {
		t.Errorf("without ldflags: %q, want %q", got, want)
	}
}

func TestConfigCheckValid(t *testing.T) {
	path := writeConfig(t, validConfig)
	got := invoke(t, []string{"config", "check", "-config", path}, nil)
	if got.code != 0 {
		t.Fatalf("exit code = %d, want 0\nstderr: %s", got.code, got.stderr)
	}
	if got.stderr != "" {
		t.Errorf("stderr = %q, want empty (no warnings for this file)", got.stderr)
	}
	if !strings.HasPrefix(got.stdout, "# configuration ") || !strings.Contains(got.stdout, "is valid") {
		t.Errorf("stdout does not start with the validity comment:\n%s", got.stdout)
	}
	m := effective(t, got.stdout)
	want := map[string]any{
		"server.listen":                 "127.0.0.1:18080", // from the file
		"publisher.domain":              "www.example.com", // from the file
		"server.admin_listen":           "127.0.0.1:9090",  // default
		"compression.gzip_level":        int64(6),          // default
		"publisher.origin_idle_timeout": "15s",             // default, as a duration string
		"platform.delivery_compression": "builtin",         // default
	}
	for key, w := range want {
		v, ok := lookup(m, key)
		if !ok {
			t.Errorf("effective config lacks %s", key)
			continue
		}
		if v != w {
			t.Errorf("%s = %#v, want %#v", key, v, w)
		}
	}
	if origin, _ := lookup(m, "publisher.origin_url"); origin != "http://127.0.0.1:8000" {
		t.Errorf("publisher.origin_url = %#v, want the file's value", origin)
	}
}

func TestConfigCheckReportsEveryProblem(t *testing.T) {
	path := writeConfig(t, `
[server]
listn = ":8080"

[publisher]
origin_url = "http://user:hunter2pw@127.0.0.1:8000/app"

[compression]
gzip_level = 42

[[creative_opportunities.slot]]
id = "a"
page_patterns = ["/a**b"]
`)
	got := invoke(t, []string{"config", "check", "-config", path}, nil)
	if got.code != 1 {
		t.Fatalf("exit code = %d, want 1\nstdout: %s\nstderr: %s", got.code, got.stdout, got.stderr)
	}
	if got.stdout != "" {
		t.Errorf("stdout = %q, want empty for an invalid configuration", got.stdout)
	}
	if strings.Contains(got.stderr, "hunter2pw") {
		t.Errorf("stderr leaks the origin_url password:\n%s", got.stderr)
	}
	if !strings.Contains(got.stderr, path) {
		t.Errorf("stderr does not name the file %s:\n%s", path, got.stderr)
	}
	wantKeys := []string{
		"server.listn",     // unknown key
		"publisher.domain", // missing
		"publisher.origin_url",
		"compression.gzip_level",
		"creative_opportunities.slot[0].page_patterns[0]",
	}
	var items []string
	for _, line := range strings.Split(got.stderr, "\n") {
		if strings.HasPrefix(line, "  - ") {
			items = append(items, line)
		}
	}
	if len(items) != len(wantKeys) {
		t.Errorf("stderr lists %d problems, want %d:\n%s", len(items), len(wantKeys), got.stderr)
	}
	for _, key := range wantKeys {
		if !slices.ContainsFunc(items, func(line string) bool { return strings.Contains(line, key) }) {
			t.Errorf("no problem line names %s:\n%s", key, got.stderr)
		}
	}
}

func TestConfigCheckEnvironment(t *testing.T) {
	path := writeConfig(t, validConfig)
	missing := filepath.Join(t.TempDir(), "missing.toml")
	tests := []struct {
		name       string
		args       []string
		environ    []string
		wantCode   int
		wantValues map[string]any // dotted key -> value in the effective config
		wantStderr []string
	}{
		{
			name:       "SSATD_CONFIG names the file",
			environ:    []string{"SSATD_CONFIG=" + path},
			wantValues: map[string]any{"publisher.domain": "www.example.com", "server.listen": "127.0.0.1:18080"},
		},
		{
			name:       "-config wins over SSATD_CONFIG",
			args:       []string{"-config", path},
			environ:    []string{"SSATD_CONFIG=" + missing},
			wantValues: map[string]any{"publisher.domain": "www.example.com"},
		},
		{
			name:       "SSATD_CONFIG naming a missing file",
			environ:    []string{"SSATD_CONFIG=" + missing},
			wantCode:   1,
			wantStderr: []string{missing},
		},
		{
			name:       "environment overrides the file",
			environ:    []string{"SSATD_CONFIG=" + path, "SSATD_PUBLISHER_ORIGIN_URL=http://10.1.2.3:9000", "SSATD_COMPRESSION_GZIP_LEVEL=9"},
			wantValues: map[string]any{"publisher.origin_url": "http://10.1.2.3:9000", "compression.gzip_level": int64(9), "publisher.domain": "www.example.com"},
		},
		{
			name:       "environment only",
			environ:    []string{"SSATD_PUBLISHER_DOMAIN=env.example", "SSATD_PUBLISHER_ORIGIN_URL=https://origin.env.example"},
			wantValues: map[string]any{"publisher.domain": "env.example", "publisher.origin_url": "https://origin.env.example"},
		},
		{
			name:       "bad integer in the environment",
			environ:    []string{"SSATD_CONFIG=" + path, "SSATD_PUBLISHER_MAX_ORIGIN_RESPONSE_BYTES=abc"},
			wantCode:   1,
			wantStderr: []string{"SSATD_PUBLISHER_MAX_ORIGIN_RESPONSE_BYTES", "publisher.max_origin_response_bytes"},
		},
		{
			name:       "bad duration in the environment",
			environ:    []string{"SSATD_CONFIG=" + path, "SSATD_SERVER_SHUTDOWN_TIMEOUT=soon"},
			wantCode:   1,
			wantStderr: []string{"SSATD_SERVER_SHUTDOWN_TIMEOUT", "server.shutdown_timeout"},
		},
		{
			name:       "environment value that fails validation",
			environ:    []string{"SSATD_CONFIG=" + path, "SSATD_COMPRESSION_BROTLI_QUALITY=12"},
			wantCode:   1,
			wantStderr: []string{"compression.brotli_quality"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := invoke(t, append([]string{"config", "check"}, tt.args...), tt.environ)
			if got.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d\nstdout: %s\nstderr: %s", got.code, tt.wantCode, got.stdout, got.stderr)
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(got.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, got.stderr)
				}
			}
			if tt.wantCode != 0 {
				return
			}
			m := effective(t, got.stdout)
			for key, w := range tt.wantValues {
				if v, ok := lookup(m, key); !ok || v != w {
					t.Errorf("%s = %#v (present %v), want %#v", key, v, ok, w)
				}
			}
		})
	}
}

func TestConfigCheckWarnings(t *testing.T) {
	publisher := "[publisher]\ndomain = \"www.example.com\"\norigin_url = \"http://127.0.0.1:8000\"\n"
	// base lets some page be SSAT-eligible, so that it warns of nothing.
	base := publisher + "[auction]\nenabled = true\n[[creative_opportunities.slot]]\nid = \"top\"\npage_patterns = [\"/**\"]\n"
	tests := []struct {
		name     string
		doc      string // replaces base
		extra    string
		environ  []string
		wantWarn []string // substrings, each on a "warning: " line; none means no warnings
	}{
		{name: "none"},
		{name: "no page can be SSAT-eligible", doc: publisher,
			wantWarn: []string{"auction.enabled is off and no creative_opportunities.slot is configured: no page is ever SSAT-eligible"}},
		{name: "auction switched off from the environment", environ: []string{"SSATD_AUCTION_ENABLED=false"},
			wantWarn: []string{"auction.enabled is off: no page is ever SSAT-eligible"}},
		{name: "diagnostics headers", extra: "[debug]\ndiagnostics_headers = true\n",
			wantWarn: []string{"debug.diagnostics_headers"}},
		{name: "diagnostics headers from the environment", environ: []string{"SSATD_DEBUG_DIAGNOSTICS_HEADERS=true"},
			wantWarn: []string{"debug.diagnostics_headers"}},
		{name: "both debug switches", extra: "[debug]\ndiagnostics_headers = true\nallow_mode_override = true\n",
			wantWarn: []string{"debug.diagnostics_headers", "debug.allow_mode_override"}},
		{name: "auction without slots", doc: publisher + "[auction]\nenabled = true\n",
			wantWarn: []string{"auction.enabled is on but no creative_opportunities.slot"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := cmp.Or(tt.doc, base)
			path := writeConfig(t, doc+tt.extra)
			got := invoke(t, []string{"config", "check", "-config", path}, tt.environ)
			if got.code != 0 {
				t.Fatalf("exit code = %d, want 0 (warnings do not fail the check)\nstderr: %s", got.code, got.stderr)
			}
			var warnings []string
			for _, line := range strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n") {
				if line == "" {
					continue
				}
				if !strings.HasPrefix(line, "warning: ") {
					t.Errorf("unexpected stderr line %q", line)
					continue
				}
				warnings = append(warnings, line)
			}
			if len(warnings) != len(tt.wantWarn) {
				t.Errorf("got %d warnings, want %d:\n%s", len(warnings), len(tt.wantWarn), got.stderr)
			}
			for _, w := range tt.wantWarn {
				if !slices.ContainsFunc(warnings, func(line string) bool { return strings.Contains(line, w) }) {
					t.Errorf("no warning names %s:\n%s", w, got.stderr)
				}
			}
			if strings.Contains(got.stdout, "warning") {
				t.Errorf("warnings leaked into stdout, which must stay valid TOML:\n%s", got.stdout)
			}
		})
	}
}

// TestShippedConfigs checks every file in configs/: it must pass config
// check without warnings (minimal.toml with just the one that says no page
// is SSAT-eligible), and its effective output must itself be a valid
// configuration that prints the same settings again.
func TestShippedConfigs(t *testing.T) {
	files, err := filepath.Glob("../../configs/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found %d files in ../../configs, want at least example.toml and minimal.toml", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			got := invoke(t, []string{"config", "check", "-config", file}, nil)
			if got.code != 0 {
				t.Fatalf("exit code = %d, want 0\nstderr: %s", got.code, got.stderr)
			}
			want := ""
			if filepath.Base(file) == "minimal.toml" {
				want = "warning: auction.enabled is off and no creative_opportunities.slot is configured: no page is ever SSAT-eligible, so no page gets the ad-slot and bid scripts\n"
			}
			if got.stderr != want {
				t.Errorf("stderr = %q, want %q", got.stderr, want)
			}
			again := invoke(t, []string{"config", "check", "-config", writeConfig(t, got.stdout)}, nil)
			if again.code != 0 {
				t.Fatalf("re-checking the effective output: exit code = %d\nstderr: %s", again.code, again.stderr)
			}
			_, first, _ := strings.Cut(got.stdout, "\n")
			_, second, _ := strings.Cut(again.stdout, "\n")
			if first != second {
				t.Errorf("effective output does not round-trip:\nfirst:\n%s\nsecond:\n%s", first, second)
			}
		})
	}
}

// TestExampleConfigIsComplete makes configs/example.toml list every key the
// daemon knows, so that a key added later without documentation is noticed.
func TestExampleConfigIsComplete(t *testing.T) {
	const file = "../../configs/example.toml"
	got := invoke(t, []string{"config", "check", "-config", file}, nil)
	if got.code != 0 {
		t.Fatalf("exit code = %d, want 0\nstderr: %s", got.code, got.stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// max_concurrent_pages is sized to the machine, so the file lists it
	// commented out (TestREADMEDocumentsEveryKeyWithItsDefault checks that);
	// listed that way, it counts.
	listed := strings.Replace(string(data), "\n# max_concurrent_pages = ", "\nmax_concurrent_pages = ", 1)
	var written map[string]any
	if err := toml.Unmarshal([]byte(listed), &written); err != nil {
		t.Fatal(err)
	}
	if missing := missingKeys("", effective(t, got.stdout), written); len(missing) > 0 {
		t.Errorf("%s does not set these keys: %s", file, strings.Join(missing, ", "))
	}
	for _, key := range []string{"auction.provider", "server.listen", "server.admin_listen", "publisher.domain", "publisher.origin_url"} {
		if _, ok := lookup(written, key); !ok {
			t.Errorf("%s lacks %s", file, key)
		}
	}
	if v, _ := lookup(written, "auction.provider"); v != "openrtb" {
		t.Errorf("auction.provider = %#v, want \"openrtb\"", v)
	}
	if v, _ := lookup(written, "auction.enabled"); v != true {
		t.Errorf("auction.enabled = %#v, want true", v)
	}
}

// missingKeys lists the keys of want (recursively, through tables and
// arrays of tables) that are absent from have.
func missingKeys(prefix string, want, have any) []string {
	var out []string
	switch w := want.(type) {
	case map[string]any:
		h, _ := have.(map[string]any)
		for k, v := range w {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			hv, ok := h[k]
			if !ok {
				out = append(out, key)
				continue
			}
			out = append(out, missingKeys(key, v, hv)...)
		}
	case []any:
		h, _ := have.([]any)
		for i, v := range w {
			if _, isTable := v.(map[string]any); !isTable {
				continue
			}
			if i >= len(h) {
				out = append(out, prefix)
				continue
			}
			out = append(out, missingKeys(prefix+"["+strconv.Itoa(i)+"]", v, h[i])...)
		}
	}
	sort.Strings(out)
	return out
}
