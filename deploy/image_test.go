package deploy

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/testutil"
)

// distrolessUsers are the named users of the distroless base images.
var distrolessUsers = map[string]int{"root": 0, "nonroot": 65532}

// imageFacts is what the final stage of the Dockerfile promises.
type imageFacts struct {
	binary     string   // where COPY puts the binary
	entrypoint []string // ENTRYPOINT
	cmd        []string // CMD
	configPath string   // ENV SSATD_CONFIG
	uid, gid   int      // USER, resolved
	expose     []int    // EXPOSE
	health     []string // HEALTHCHECK CMD
}

func readImageFacts(t *testing.T) (*dockerfile, imageFacts) {
	t.Helper()
	df := parseDockerfile(t)
	s := df.final()
	var f imageFacts
	// The binary is the COPY from the build stage (another copies examples).
	for _, in := range s.insts {
		if fields := strings.Fields(in.args); in.cmd == "COPY" && len(fields) == 3 && strings.HasPrefix(fields[0], "--from=") {
			f.binary = fields[2]
		}
	}
	if f.binary == "" {
		t.Fatal("the Dockerfile's final stage copies no binary from the build stage")
	}
	f.entrypoint = execForm(t, s.only(t, "ENTRYPOINT"))
	f.cmd = execForm(t, s.only(t, "CMD"))
	f.configPath = s.env(t, "SSATD_CONFIG")
	user := s.only(t, "USER").args
	u, g, _ := strings.Cut(user, ":")
	var ok bool
	if f.uid, ok = lookupUser(u); !ok {
		t.Fatalf("Dockerfile USER %s: unknown user %q", user, u)
	}
	f.gid = f.uid
	if g != "" {
		if f.gid, ok = lookupUser(g); !ok {
			t.Fatalf("Dockerfile USER %s: unknown group %q", user, g)
		}
	}
	for _, p := range strings.Fields(s.only(t, "EXPOSE").args) {
		n, err := strconv.Atoi(strings.TrimSuffix(p, "/tcp"))
		if err != nil {
			t.Fatalf("Dockerfile EXPOSE %s: %v", p, err)
		}
		f.expose = append(f.expose, n)
	}
	f.health = s.healthcheck(t)
	return df, f
}

func lookupUser(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	n, ok := distrolessUsers[s]
	return n, ok
}

func portOf(t *testing.T, key, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s %q: %v", key, addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("%s %q: %v", key, addr, err)
	}
	return n
}

// healthURL returns the -url argument of an `ssatd healthcheck` argv.
func healthURL(t *testing.T, argv []string) *url.URL {
	t.Helper()
	i := slices.Index(argv, "-url")
	if len(argv) < 2 || argv[1] != "healthcheck" || i < 0 || i+1 >= len(argv) {
		t.Fatalf("health check %q: want `ssatd healthcheck -url URL`", argv)
	}
	u, err := url.Parse(argv[i+1])
	if err != nil {
		t.Fatalf("health check URL %q: %v", argv[i+1], err)
	}
	return u
}

// TestDockerfileInStep keeps the image's promises consistent with one
// another and with the daemon's defaults: a config mounted at SSATD_CONFIG
// that leaves the listeners alone is served on the exposed ports and passes
// the health check.
func TestDockerfileInStep(t *testing.T) {
	_, f := readImageFacts(t)
	def := config.Defaults()
	listen := portOf(t, "server.listen default", def.Server.Listen)
	admin := portOf(t, "server.admin_listen default", def.Server.AdminListen)

	if f.uid != 65532 || f.gid != 65532 {
		t.Errorf("USER resolves to %d:%d, want the unprivileged 65532:65532", f.uid, f.gid)
	}
	if len(f.entrypoint) != 1 || f.entrypoint[0] != f.binary {
		t.Errorf("ENTRYPOINT %q, want [%q], the copied binary", f.entrypoint, f.binary)
	}
	if !slices.Equal(f.cmd, []string{"serve"}) {
		t.Errorf("CMD %q, want [\"serve\"]: serve reads SSATD_CONFIG when -config is not given", f.cmd)
	}
	if !filepath.IsAbs(f.configPath) {
		t.Errorf("ENV SSATD_CONFIG=%q, want an absolute path", f.configPath)
	}
	if got, want := slices.Sorted(slices.Values(f.expose)), slices.Sorted(slices.Values([]int{listen, admin})); !slices.Equal(got, want) {
		t.Errorf("EXPOSE %v, want %v (server.listen and server.admin_listen defaults)", got, want)
	}
	if f.health[0] != f.binary {
		t.Errorf("HEALTHCHECK runs %q, want the image's binary %q (distroless has no shell or curl)", f.health[0], f.binary)
	}
	u := healthURL(t, f.health)
	if u.Hostname() != "127.0.0.1" || u.Port() != strconv.Itoa(admin) || u.Path != "/healthz" {
		t.Errorf("HEALTHCHECK URL %s, want http://127.0.0.1:%d/healthz: the admin listener's default is %s",
			u, admin, def.Server.AdminListen)
	}
}

// The COMMIT and DATE build arguments the image test passes.
const imageCommit, imageDate = "0123abc", "2026-12-01T12:00:00Z"

// buildLikeDockerfile runs the build stage's `go build` command with its
// environment and flags, only redirecting -o, and returns the binary.
func buildLikeDockerfile(t *testing.T, df *dockerfile, version string) string {
	t.Helper()
	var run *instruction
	var args map[string]string
	for _, s := range df.stages[:len(df.stages)-1] {
		args = map[string]string{}
		for i, in := range s.insts {
			if in.cmd == "ARG" {
				k, v, _ := strings.Cut(in.args, "=")
				args[k] = v
			}
			if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
				run = &s.insts[i]
				break
			}
		}
		if run != nil {
			break
		}
	}
	if run == nil {
		t.Fatal("no `go build` RUN in the Dockerfile's build stages")
	}
	args["VERSION"], args["COMMIT"], args["DATE"] = version, imageCommit, imageDate
	words, err := splitWords(run.args)
	if err != nil {
		t.Fatalf("Dockerfile line %d: %v", run.line, err)
	}
	var env []string
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		env = append(env, words[0])
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "build" {
		t.Fatalf("Dockerfile line %d: %q, want [VAR=value ...] go build ...", run.line, words)
	}
	out := filepath.Join(t.TempDir(), "ssatd")
	var outs int
	for i := 2; i < len(words); i++ {
		words[i] = os.Expand(words[i], func(k string) string { return args[k] })
		if words[i] == "-o" && i+1 < len(words) {
			words[i+1] = out
			outs++
			i++
		}
	}
	if outs != 1 {
		t.Fatalf("Dockerfile line %d: %d -o flags, want 1", run.line, outs)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building like the Dockerfile needs the go command in PATH: %v", err)
	}
	cmd := exec.Command(gobin, words[1:]...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s (env %q): %v\n%s", gobin, strings.Join(words[1:], " "), env, err, b)
	}
	for _, e := range []string{"CGO_ENABLED=0"} {
		if !slices.Contains(env, e) {
			t.Errorf("the Dockerfile builds without %s; a distroless static image needs a static binary", e)
		}
	}
	if !slices.Contains(words, "-trimpath") {
		t.Errorf("the Dockerfile builds without -trimpath: %q", words)
	}
	return out
}

// checkStatic fails unless the ELF file at path needs no dynamic loader
// and no shared library, as the distroless static base requires.
func checkStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %s program header: it is dynamically linked", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %q", libs)
	}
	if f.Type != elf.ET_EXEC {
		t.Errorf("ELF type %s, want %s (a position-dependent static executable)", f.Type, elf.ET_EXEC)
	}
}

// logLines decodes the JSON log lines; other lines are skipped.
func logLines(s string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// imageRoot lays out the files of the image under a temporary folder, all
// read-only and owned by the test's user (root in CI), so that the daemon
// running as 65532 can read but not write any of them.
type imageRoot struct {
	dir, binary, config, tmp string
}

func newImageRoot(t *testing.T, f imageFacts, built, configText string) *imageRoot {
	t.Helper()
	dir := t.TempDir()
	r := &imageRoot{
		dir:    dir,
		binary: filepath.Join(dir, f.binary),
		config: filepath.Join(dir, f.configPath),
		tmp:    filepath.Join(dir, "tmp"),
	}
	bin, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{r.binary, bin, 0o555}, {r.config, []byte(configText), 0o444}} {
		if err := os.MkdirAll(filepath.Dir(file.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file.path, file.data, file.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(r.tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	// Every folder read-only; the temporary folder's parent (made 0700 by
	// the testing package) must be passable by 65532.
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chmod(p, 0o555)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	return r
}

// command runs argv as the image would: the image's binary for argv[0],
// only the image's environment, as USER when the test may switch to it.
func (r *imageRoot) command(ctx context.Context, f imageFacts, argv []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, r.binary, argv[1:]...)
	cmd.Dir = r.dir
	cmd.Env = []string{
		"SSATD_CONFIG=" + r.config,
		"TMPDIR=" + r.tmp, // read-only: any temporary file would fail
		"HOME=/nonexistent",
		"PATH=/usr/local/bin:/usr/bin:/bin",
	}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
			Uid: uint32(f.uid), Gid: uint32(f.gid), Groups: []uint32{},
		}}
	}
	return cmd
}

// TestImageContract builds the binary as the Dockerfile does and runs it as
// the image runs it: static, as 65532 from read-only files, configured only
// through SSATD_CONFIG, started with ENTRYPOINT + CMD, healthy by the
// image's HEALTHCHECK, and stopped by SIGTERM with exit status 0.
func TestImageContract(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux; the contract is checked on linux")
	}
	df, f := readImageFacts(t)
	const version = "image-contract-test"
	built := buildLikeDockerfile(t, df, version)

	t.Run("static", func(t *testing.T) { checkStatic(t, built) })
	t.Run("version ldflag", func(t *testing.T) {
		out, err := exec.Command(built, "version").Output()
		want := "ssatd " + version + " commit " + imageCommit + " date " + imageDate + "\n"
		if err != nil || string(out) != want {
			t.Errorf("ssatd version = %q, %v; want %q (the VERSION, COMMIT and DATE build arguments)", out, err, want)
		}
	})

	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head></head><body><a href="http://%s/next">n</a></body></html>`, r.Host)
	}))
	defer origin.Close()
	root := newImageRoot(t, f, built, fmt.Sprintf(`
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
drain_period = "0s"
shutdown_timeout = "5s"

[publisher]
domain = "localhost"
origin_url = %q

[auction]
enabled = true
provider = "static"

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/**"]
formats = [[728, 90]]
`, origin.URL))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	daemon := root.command(ctx, f, append(slices.Clone(f.entrypoint), f.cmd...))
	stderr := &testutil.LockedBuffer{}
	daemon.Stderr = stderr
	if err := daemon.Start(); err != nil {
		t.Fatalf("starting %s as %d:%d: %v", root.binary, f.uid, f.gid, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- daemon.Wait() }()
	defer func() {
		_ = daemon.Process.Kill()
		<-exited
	}()

	var started map[string]any
	deadline := time.Now().Add(15 * time.Second)
	for started == nil {
		for _, l := range logLines(stderr.String()) {
			if l["msg"] == "ssatd started" {
				started = l
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited (%v) before starting:\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no startup line:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	listen, _ := started["listen"].(string)
	admin, _ := started["admin_listen"].(string)

	if os.Geteuid() == 0 {
		t.Run("runs as USER", func(t *testing.T) {
			status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", daemon.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"Uid:", "Gid:"} {
				want := strconv.Itoa(f.uid)
				if key == "Gid:" {
					want = strconv.Itoa(f.gid)
				}
				for _, line := range strings.Split(string(status), "\n") {
					if fields := strings.Fields(line); len(fields) == 5 && fields[0] == key {
						for _, id := range fields[1:] {
							if id != want {
								t.Errorf("/proc status %s, want every id %s", line, want)
							}
						}
					}
				}
			}
		})
	} else {
		t.Logf("not root: the daemon runs as uid %d instead of %d", os.Geteuid(), f.uid)
	}

	t.Run("serves a page", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+listen+"/", nil)
		req.Host = "localhost"
		req.Header.Set("Accept", "text/html")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `href="http://localhost/next"`) {
			t.Errorf("GET / = %d, %v:\n%s\nwant 200 with the link rewritten to localhost", resp.StatusCode, err, body)
		}
	})

	// The image's HEALTHCHECK command, pointed at the port the daemon bound.
	health := func(addr string) error {
		argv := slices.Clone(f.health)
		u := healthURL(t, argv)
		u.Host = addr
		argv[slices.Index(argv, "-url")+1] = u.String()
		hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
		defer hcancel()
		out, err := root.command(hctx, f, argv).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%q: %w\n%s", argv, err, out)
		}
		return nil
	}
	if err := health(admin); err != nil {
		t.Errorf("HEALTHCHECK failed: %v", err)
	}

	if err := daemon.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("serve after SIGTERM: %v, want exit status 0\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not stop after SIGTERM:\n%s", stderr.String())
	}
	lines := logLines(stderr.String())
	if len(lines) == 0 || lines[len(lines)-1]["msg"] != "stopped" {
		t.Errorf("the last log line is not \"stopped\":\n%s", stderr.String())
	}
	for _, l := range lines {
		if l["level"] == "error" || l["level"] == "warn" {
			t.Errorf("unexpected %s line: %v", l["level"], l)
		}
	}
	if err := health(admin); err == nil {
		t.Error("HEALTHCHECK passed after the daemon stopped; it cannot tell a dead daemon")
	} else if !errors.As(err, new(*exec.ExitError)) {
		t.Errorf("HEALTHCHECK after the stop did not run: %v", err)
	}
}
