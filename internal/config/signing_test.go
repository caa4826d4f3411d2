package config

import (
	"strings"
	"testing"
)

// TestRequestSigningKeys catches [request_signing] not reaching
// RequestSigningConfig from either format, a Trusted Server file's
// enabled switch still noted as not emulated, or signing enabled without
// a key directory accepted.
func TestRequestSigningKeys(t *testing.T) {
	// A key directory serves the admin routes, which a handler must cover
	// (handlers_test.go).
	tsSigning := "\n[request_signing]\nenabled = true\nconfig_store_id = \"cfg\"\nsecret_store_id = \"sec\"\n" + adminHandler
	native := minimalTOML + adminHandler
	tests := []struct {
		name    string
		doc     string
		environ []string
		want    RequestSigningConfig
		err     string
	}{
		{name: "native default is off", doc: minimalTOML},
		{name: "native keys", doc: native + "\n[request_signing]\nenabled = true\nkey_dir = \"/var/lib/ssatd/keys\"\n",
			want: RequestSigningConfig{Enabled: true, KeyDir: "/var/lib/ssatd/keys"}},
		{name: "native environment", doc: native, environ: []string{"SSATD_REQUEST_SIGNING_ENABLED=true", "SSATD_REQUEST_SIGNING_KEY_DIR=/k"},
			want: RequestSigningConfig{Enabled: true, KeyDir: "/k"}},
		{name: "native enabled without key_dir", doc: minimalTOML + "\n[request_signing]\nenabled = true\n", err: "request_signing.key_dir: is required"},
		{name: "upstream file, key_dir in [ssatd]", doc: tsMinimal + tsSigning + "\n[ssatd.request_signing]\nkey_dir = \"keys\"\n",
			want: RequestSigningConfig{Enabled: true, KeyDir: "keys"}},
		{name: "upstream file, key_dir from the environment", doc: tsMinimal + tsSigning, environ: []string{"SSATD_REQUEST_SIGNING_KEY_DIR=/k"},
			want: RequestSigningConfig{Enabled: true, KeyDir: "/k"}},
		{name: "upstream environment", doc: tsMinimal + tsSigning + "\n[ssatd.request_signing]\nkey_dir = \"keys\"\n",
			environ: []string{"TRUSTED_SERVER__REQUEST_SIGNING__ENABLED=false"}, want: RequestSigningConfig{KeyDir: "keys"}},
		{name: "upstream file without key_dir", doc: tsMinimal + tsSigning, err: "request_signing.key_dir: is required"},
		{name: "[ssatd] may not set what the file maps", doc: tsMinimal + tsSigning + "\n[ssatd.request_signing]\nenabled = false\nkey_dir = \"k\"\n",
			err: "request_signing.enabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeFile(t, tt.doc), tt.environ)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if c.RequestSigning != tt.want {
				t.Errorf("got %+v, want %+v", c.RequestSigning, tt.want)
			}
			if containsString(noteKeys(c), "request_signing") {
				t.Errorf("request_signing still noted as not emulated")
			}
		})
	}
}
