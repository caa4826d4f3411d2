package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeysInitCreatesTheFirstKeyOnce catches `ssatd keys init` failing to
// leave a key a daemon can sign with, replacing a key that exists, or
// accepting a missing -dir or sub-command.
func TestKeysInitCreatesTheFirstKeyOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	r := invoke(t, []string{"keys", "init", "-dir", dir}, nil)
	if r.code != 0 || !strings.Contains(r.stdout, "created key ts-") {
		t.Fatalf("first run: %d %q %q", r.code, r.stdout, r.stderr)
	}
	kid, err := os.ReadFile(filepath.Join(dir, "current-kid"))
	if err != nil {
		t.Fatal(err)
	}
	secret, err := os.Stat(filepath.Join(dir, "secret", string(kid)))
	if err != nil || secret.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v", err, secret)
	}
	r = invoke(t, []string{"keys", "init", "-dir", dir}, nil)
	if r.code != 0 || !strings.Contains(r.stdout, "already holds the current key "+string(kid)) {
		t.Errorf("second run: %d %q", r.code, r.stdout)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "current-kid")); string(again) != string(kid) {
		t.Errorf("current key changed from %s to %s", kid, again)
	}
	for _, args := range [][]string{{"keys", "init"}, {"keys"}, {"keys", "rotate"}} {
		if r := invoke(t, args, nil); r.code != 2 {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
	}
}
