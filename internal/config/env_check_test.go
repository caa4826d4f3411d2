package config

import (
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
)

// TestToolEnvIsLeftAlone catches the variable check refusing a variable
// the test suite or CI reads (testutil.ToolEnv): a daemon started under
// CI's environment would not start. Config does not list them; the rule
// of mayBeMeantFor leaves them alone.
func TestToolEnvIsLeftAlone(t *testing.T) {
	path := writeFile(t, minimalTOML)
	var environ []string
	for _, name := range testutil.ToolEnv {
		environ = append(environ, name+"=1")
	}
	if _, err := Load(path, environ); err != nil {
		t.Errorf("Load refused the test suite's variables: %v", err)
	}
}

// TestOneWordVariableRule: a one-word SSATD_ name is another tool's, and
// passes, unless it begins with a word of a key or of the command line's
// variables, where it is a typo with an underscore or a section dropped.
// Names with an underscore after the prefix are checked whatever they are.
func TestOneWordVariableRule(t *testing.T) {
	path := writeFile(t, minimalTOML)
	tests := []struct {
		name    string
		wantErr string // "" for accepted
	}{
		{"SSATD_SOMETOOL", ""},
		{"SSATD_BENCHDIR", ""},
		{"SSATD_LOGLEVEL", "SSATD_LOGLEVEL: unknown variable; did you mean SSATD_LOG_LEVEL?"},
		{"SSATD_SERVERLISTEN", "SSATD_SERVERLISTEN: unknown variable; did you mean SSATD_SERVER_LISTEN?"},
		{"SSATD_LISTEN", "SSATD_LISTEN: unknown variable"},
		{"SSATD_CONFIGFILE", "SSATD_CONFIGFILE: unknown variable"},
		{"SSATD_SOME_TOOL", "SSATD_SOME_TOOL: unknown variable"},
		{"SSATD_ORIGIN_URL", "SSATD_ORIGIN_URL: unknown variable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(path, []string{tt.name + "=1"})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
