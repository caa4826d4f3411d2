package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// serve -ready-file names the ports the system chose for :0, both accept
// at once, and the file is gone when the process has exited.
func TestServeReadyFileOverAProcess(t *testing.T) {
	o := newTestOrigin(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ssatd.toml")
	writeFile(t, cfg, `[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
drain_period = "0s"
[publisher]
domain = "127.0.0.1"
origin_url = "`+o.srv.URL+`"
`)
	ready := filepath.Join(dir, "ready.json")
	p := startProcess(t, "serve", "-config", cfg, "-ready-file", ready)
	p.waitLine(t, "ready file written")
	var info struct {
		Client    string `json:"client"`
		Admin     string `json:"admin"`
		ClientURL string `json:"client_url"`
		AdminURL  string `json:"admin_url"`
		PID       int    `json:"pid"`
	}
	data, err := os.ReadFile(ready)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	if info.PID != p.cmd.Process.Pid || strings.HasSuffix(info.Client, ":0") || strings.HasSuffix(info.Admin, ":0") ||
		info.ClientURL != "http://"+info.Client || info.AdminURL != "http://"+info.Admin {
		t.Fatalf("ready file %s", data)
	}
	// The page's links name the port the system chose, as the guest
	// keeps only a configured port.
	for url, want := range map[string]string{info.AdminURL + "/readyz": "ready\n", info.ClientURL + "/page": `href="http://` + info.Client + `/next?a=1"`} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %q, want %s in it", url, resp.StatusCode, body, want)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if _, err := os.Stat(ready); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ready file left after exit: %v", err)
	}
}

// A ready file that cannot be written stops serve before it serves.
func TestServeReadyFileUnwritable(t *testing.T) {
	o := newTestOrigin(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ssatd.toml")
	writeFile(t, cfg, "[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n[publisher]\ndomain = \"127.0.0.1\"\norigin_url = \""+o.srv.URL+"\"\n")
	p := startProcess(t, "serve", "-config", cfg, "-ready-file", filepath.Join(dir, "missing", "ready.json"))
	line := p.waitLine(t, "-ready-file")
	if !strings.Contains(line, "no such file") {
		t.Errorf("error line %s", line)
	}
	var ee *exec.ExitError
	if err := p.wait(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want status 1", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
