package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
)

// TestAlertRules checks deploy/prometheus/alerts.yml with Prometheus's own
// tool: the rules parse (promtool check rules), and each alert fires on the
// series of alerts_test.yml that should raise it and on no other (promtool
// test rules). promtool comes with Debian's prometheus package, which
// .ci/run installs; without it the test skips, unless SSATD_STRICT=1.
func TestAlertRules(t *testing.T) {
	promtool := testutil.RequireTool(t, "promtool")
	dir := filepath.Join(repoRoot, "deploy", "prometheus")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
	run(dir, "check", "rules", "alerts.yml")
	run(dir, "test", "rules", "alerts_test.yml")
	// The Compose profile mounts both files side by side in
	// /etc/prometheus, where prometheus.yml's rule_files finds alerts.yml.
	etc := t.TempDir()
	for src, dst := range map[string]string{
		filepath.Join(repoRoot, "deploy", "prometheus.yml"): "prometheus.yml",
		filepath.Join(dir, "alerts.yml"):                    "alerts.yml",
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(etc, dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(etc, "check", "config", "prometheus.yml")
}
