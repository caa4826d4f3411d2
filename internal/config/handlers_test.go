package config

import (
	"bytes"
	"strings"
	"testing"
)

// adminHandler covers the admin routes, as a key directory requires.
const adminHandler = "\n[[handlers]]\npath = \"^/_ts/admin\"\nusername = \"ops\"\npassword = \"handler-SECRET-pw\"\n"

// TestHandlersKeys catches [[handlers]] not reaching Config from either
// format, a handler that could never match or ask anything accepted, and
// a key directory (which serves the admin routes) accepted without a
// handler covering them, as upstream refuses to start then
// (settings.rs:2996-3008).
func TestHandlersKeys(t *testing.T) {
	keys := "\n[request_signing]\nkey_dir = \"k\"\n"
	tests := []struct {
		name, doc string
		want      []HandlerConfig
		err       string
	}{
		{name: "none", doc: minimalTOML},
		{name: "native", doc: minimalTOML + adminHandler,
			want: []HandlerConfig{{Path: "^/_ts/admin", Username: "ops", Password: "handler-SECRET-pw"}}},
		{name: "upstream file", doc: tsMinimal + adminHandler,
			want: []HandlerConfig{{Path: "^/_ts/admin", Username: "ops", Password: "handler-SECRET-pw"}}},
		{name: "key_dir with a covering handler", doc: minimalTOML + keys + adminHandler,
			want: []HandlerConfig{{Path: "^/_ts/admin", Username: "ops", Password: "handler-SECRET-pw"}}},
		{name: "key_dir without a handler", doc: minimalTOML + keys,
			err: "handlers: no handler covers the admin route(s) /_ts/admin/keys/rotate, /_ts/admin/keys/deactivate"},
		{name: "upstream key_dir without a handler", doc: tsMinimal + "\n[ssatd.request_signing]\nkey_dir = \"k\"\n",
			err: "handlers: no handler covers"},
		{name: "key_dir, one route uncovered", doc: minimalTOML + keys + strings.Replace(adminHandler, "^/_ts/admin", "^/_ts/admin/keys/rotate$", 1),
			err: "admin route(s) /_ts/admin/keys/deactivate,"},
		{name: "bad regex", doc: minimalTOML + strings.Replace(adminHandler, "^/_ts/admin", "^/(", 1),
			err: "handlers[0].path: is not a regular expression"},
		{name: "empty path", doc: minimalTOML + strings.Replace(adminHandler, "^/_ts/admin", "", 1), err: "handlers[0].path: is required"},
		{name: "empty username", doc: minimalTOML + strings.Replace(adminHandler, `"ops"`, `""`, 1), err: "handlers[0].username: is required"},
		{name: "placeholder password", doc: minimalTOML + strings.Replace(adminHandler, "handler-SECRET-pw", "Change-Me-Admin-Password", 1),
			err: "handlers[0].password: is a placeholder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeFile(t, tt.doc), nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "SECRET") {
					t.Errorf("the error shows a password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(c.Handlers) != len(tt.want) {
				t.Fatalf("handlers %v, want %v", c.Handlers, tt.want)
			}
			for i, h := range c.Handlers {
				w := tt.want[i]
				if h.Path != w.Path || h.Username.Expose() != w.Username.Expose() || h.Password.Expose() != w.Password.Expose() {
					t.Errorf("handler %d: %q %q %q, want %q %q %q", i, h.Path, h.Username.Expose(), h.Password.Expose(), w.Path, w.Username.Expose(), w.Password.Expose())
				}
			}
			if containsString(noteKeys(c), "handlers") {
				t.Errorf("handlers still noted as not emulated")
			}
		})
	}
}

// TestHandlerCredentialsMaskedInEffective catches a handler's username or
// password in the effective configuration (config check), which upstream
// redacts both of (settings.rs:559-562), while config convert keeps them
// for the file it writes to ask them.
func TestHandlerCredentialsMaskedInEffective(t *testing.T) {
	c, err := Load(writeFile(t, tsMinimal+strings.Replace(adminHandler, `"ops"`, `"ops-SECRET-user"`, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := c.WriteEffective(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "SECRET") || !strings.Contains(out.String(), "path = '^/_ts/admin'") {
		t.Errorf("effective configuration:\n%s", out.String())
	}
	native, err := c.NativeTOML()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Load(writeFile(t, string(native)), nil)
	if err != nil {
		t.Fatalf("converted file: %v\n%s", err, native)
	}
	if len(again.Handlers) != 1 || again.Handlers[0].Password.Expose() != "handler-SECRET-pw" || again.Handlers[0].Username.Expose() != "ops-SECRET-user" {
		t.Errorf("converted handlers %#v", again.Handlers)
	}
}
