package deploy

import (
	"cmp"
	"context"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/ssatd/ssatd/internal/config"
)

// loadCompose loads docker-compose.yml as `docker compose` does: schema
// validation, interpolation (from an empty environment, so the result does
// not depend on the machine), normalization and the consistency checks.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadComposeFiles(nil, "docker-compose.yml")
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if len(p.Services) == 0 {
		t.Fatal("docker-compose.yml has no services")
	}
	return p
}

// loadComposeFiles is `docker compose -f files[0] -f files[1] ...
// --profile profiles[0] ...` from the repository root, loaded as
// loadCompose does.
func loadComposeFiles(profiles []string, files ...string) (*types.Project, error) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(root, f)
	}
	opts, err := cli.NewProjectOptions(paths,
		cli.WithWorkingDirectory(root),
		cli.WithEnv(nil),
		cli.WithProfiles(profiles),
		cli.WithInterpolation(true),
		cli.WithNormalization(true),
		cli.WithConsistency(true),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return opts.LoadProject(ctx)
}

// argv is what a service runs inside the image: ENTRYPOINT + CMD, with the
// service's entrypoint or command replacing the image's.
func argv(svc types.ServiceConfig, f imageFacts) []string {
	entry, cmd := f.entrypoint, f.cmd
	if svc.Entrypoint != nil {
		entry, cmd = svc.Entrypoint, nil
	}
	if svc.Command != nil {
		cmd = svc.Command
	}
	return append(slices.Clone(entry), cmd...)
}

// flagValue returns the value of -name (or --name) in args, or "".
func flagValue(args []string, name string) string {
	for i, a := range args {
		for _, p := range []string{"-" + name, "--" + name} {
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v
			}
		}
	}
	return ""
}

// hostPath maps a path inside the container to the file a bind mount puts
// there, or "" when no bind mount covers it.
func hostPath(svc types.ServiceConfig, inContainer string) string {
	for _, v := range svc.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		if rel, err := filepath.Rel(v.Target, inContainer); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join(v.Source, rel)
		}
	}
	return ""
}

// serviceConfig loads the ssatd configuration a `serve` service runs with:
// the file named by -config or SSATD_CONFIG (the image's default path
// otherwise), through its bind mount, with the service's SSATD_* variables.
func serviceConfig(t *testing.T, name string, svc types.ServiceConfig, args []string, f imageFacts) *config.Config {
	t.Helper()
	var environ []string
	file := f.configPath
	for k, v := range svc.Environment {
		if v == nil {
			continue
		}
		environ = append(environ, k+"="+*v)
		if k == "SSATD_CONFIG" {
			file = *v
		}
	}
	if c := flagValue(args, "config"); c != "" {
		file = c
	}
	src := hostPath(svc, file)
	if src == "" {
		t.Fatalf("service %s: serve reads %s, which no bind mount provides", name, file)
	}
	cfg, err := config.Load(src, environ)
	if err != nil {
		t.Fatalf("service %s: %s (mounted from %s): %v", name, file, src, err)
	}
	return cfg
}

func mustPort(t *testing.T, what, addr string) int {
	t.Helper()
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	return portOf(t, what, addr)
}

// TestComposeFile checks, for every service, what `docker compose up` needs
// and what the loader cannot know: the image exists or is built, mounted
// files exist, health checks probe the port the service's own config
// listens on, dependencies wait for health, published ports reach the
// listeners, and the stop grace period covers ssatd's own drain.
func TestComposeFile(t *testing.T) {
	t.Run("default", func(t *testing.T) { checkComposeProject(t, loadCompose(t)) })
	t.Run(fleetProfile, func(t *testing.T) {
		p, err := loadComposeFiles([]string{fleetProfile}, "docker-compose.yml")
		if err != nil {
			t.Fatalf("docker-compose.yml, profile %s: %v", fleetProfile, err)
		}
		checkComposeProject(t, p)
	})
}

func checkComposeProject(t *testing.T, p *types.Project) {
	_, f := readImageFacts(t)
	built := map[string]bool{} // images that some service builds
	for _, svc := range p.Services {
		if svc.Build != nil && svc.Image != "" {
			built[svc.Image] = true
		}
	}
	published := map[string]string{} // host port → service
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range p.Services {
			if !yield(n) {
				return
			}
		}
	}) {
		svc := p.Services[name]
		t.Run(name, func(t *testing.T) {
			if svc.Image == "" && svc.Build == nil {
				t.Error("neither image nor build: compose cannot start it")
			}
			if svc.Build != nil {
				df := svc.Build.Dockerfile
				if !filepath.IsAbs(df) {
					df = filepath.Join(svc.Build.Context, df)
				}
				if _, err := os.Stat(df); err != nil {
					t.Errorf("build: %v", err)
				}
			}
			for _, v := range svc.Volumes {
				if v.Type != types.VolumeTypeBind {
					continue
				}
				if _, err := os.Stat(v.Source); err != nil {
					t.Errorf("volume %s:%s: the mounted file is missing: %v", v.Source, v.Target, err)
				}
				if !v.ReadOnly {
					t.Errorf("volume %s:%s is writable; mount configuration read-only", v.Source, v.Target)
				}
			}
			for dep, d := range svc.DependsOn {
				target, ok := p.Services[dep]
				switch {
				case !ok:
					t.Errorf("depends_on %s: no such service", dep)
				case d.Condition != types.ServiceConditionHealthy && d.Condition != types.ServiceConditionCompletedSuccessfully:
					t.Errorf("depends_on %s: condition %q; want service_healthy, so that it waits for a working dependency", dep, d.Condition)
				case d.Condition == types.ServiceConditionHealthy && (target.HealthCheck == nil || target.HealthCheck.Disable):
					t.Errorf("depends_on %s: service_healthy, but %s has no health check", dep, dep)
				}
			}

			args := argv(svc, f)
			// ports: the container ports the service listens on for clients,
			// and the one its health check must probe.
			var listenPorts []int
			healthPort := -1
			ssatdImage := svc.Build != nil || built[svc.Image]
			if ssatdImage && len(args) > 1 && args[1] == "serve" {
				cfg := serviceConfig(t, name, svc, args, f)
				listenPorts = []int{mustPort(t, "server.listen", cfg.Server.Listen)}
				healthPort = mustPort(t, "server.admin_listen", cfg.Server.AdminListen)
				if host, _, _ := net.SplitHostPort(cfg.Server.AdminListen); host != "" && host != "127.0.0.1" && host != "0.0.0.0" && host != "::" {
					t.Errorf("server.admin_listen %s is not reachable on 127.0.0.1 inside the container", cfg.Server.AdminListen)
				}
				grace := 10 * time.Second // compose's default
				if svc.StopGracePeriod != nil {
					grace = time.Duration(*svc.StopGracePeriod)
				}
				if need := cfg.Server.DrainPeriod.Duration + cfg.Server.ShutdownTimeout.Duration; grace < need {
					t.Errorf("stop_grace_period %s < drain_period + shutdown_timeout = %s: compose kills it mid-drain", grace, need)
				}
			} else if l := cmp.Or(flagValue(args, "listen"), flagValue(args, "addr")); l != "" {
				listenPorts = []int{mustPort(t, "-listen", l)}
				healthPort = listenPorts[0]
			} else {
				// No flag says where it listens: its ports or expose must.
				for _, pc := range svc.Ports {
					listenPorts = append(listenPorts, int(pc.Target))
				}
				for _, e := range svc.Expose {
					listenPorts = append(listenPorts, mustPort(t, "expose", e))
				}
			}

			if svc.HealthCheck == nil || svc.HealthCheck.Disable || len(svc.HealthCheck.Test) < 2 {
				t.Error("no health check")
			} else {
				test := svc.HealthCheck.Test
				if test[0] != "CMD" {
					t.Errorf("health check %q: want the CMD form (no shell in the image)", test)
				}
				if ssatdImage && test[1] != f.binary {
					t.Errorf("health check runs %q, want the image's binary %s", test[1], f.binary)
				}
				if port, ok := redisPing(t, test[1:]); ok {
					if !slices.Contains(listenPorts, port) {
						t.Errorf("health check %q pings port %d, which the service neither publishes nor exposes %v", test, port, listenPorts)
					}
				} else {
					checkHealthURL(t, healthURL(t, test[1:]), healthPort, listenPorts)
				}
			}

			for _, pc := range svc.Ports {
				if !slices.Contains(listenPorts, int(pc.Target)) {
					t.Errorf("ports %s:%d: the service listens on %v, not on %d", pc.Published, pc.Target, listenPorts, pc.Target)
				}
				if other, dup := published[pc.Published]; dup {
					t.Errorf("ports: host port %s is published by %s too", pc.Published, other)
				}
				published[pc.Published] = name
			}
		})
	}
}

// checkHealthURL checks an HTTP health check: inside the container, on the
// service's admin port (or, without one, a port it listens on), /healthz.
func checkHealthURL(t *testing.T, u *url.URL, healthPort int, listenPorts []int) {
	t.Helper()
	port, _ := strconv.Atoi(u.Port())
	if u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" {
		t.Errorf("health check URL %s does not stay inside the container", u)
	}
	if healthPort >= 0 && port != healthPort {
		t.Errorf("health check URL %s probes port %d, but the service's admin/health port is %d", u, port, healthPort)
	}
	if healthPort < 0 && !slices.Contains(listenPorts, port) {
		t.Errorf("health check URL %s probes port %d, which the service neither publishes nor exposes %v", u, port, listenPorts)
	}
	if path.Clean(u.Path) != "/healthz" {
		t.Errorf("health check URL %s, want the path /healthz", u)
	}
}

// redisPing reads a Redis-protocol health check, `redis-cli` or
// `valkey-cli -h HOST -p PORT ping`, and returns the port it pings; ok is
// false for any other command.
func redisPing(t *testing.T, argv []string) (port int, ok bool) {
	t.Helper()
	if len(argv) == 0 || (argv[0] != "redis-cli" && argv[0] != "valkey-cli") {
		return 0, false
	}
	if argv[len(argv)-1] != "ping" {
		t.Errorf("health check %q: want %s ... ping", argv, argv[0])
	}
	if h := flagValue(argv, "h"); h != "127.0.0.1" && h != "localhost" {
		t.Errorf("health check %q: -h %q does not stay inside the container", argv, h)
	}
	port, err := strconv.Atoi(cmp.Or(flagValue(argv, "p"), "6379"))
	if err != nil {
		t.Errorf("health check %q: -p: %v", argv, err)
	}
	return port, true
}
