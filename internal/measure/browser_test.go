package measure

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"strings"
	"testing"
)

func TestParseNetworks(t *testing.T) {
	tests := []struct {
		list    string
		want    []string
		wantErr string
	}{
		{"none,slow-4g", []string{"none", "slow-4g"}, ""},
		{" regular-3g , none", []string{"regular-3g", "none"}, ""},
		{"slow-4g", []string{"slow-4g"}, ""},
		{"5g", nil, `-network: unknown profile "5g" (known: none, slow-4g, regular-3g)`},
		{"", nil, `-network: unknown profile ""`},
		{"none,none", nil, `-network: "none" is named twice`},
	}
	for _, tt := range tests {
		got, err := ParseNetworks(tt.list)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseNetworks(%q) = %v, %v; want error %q", tt.list, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Fatalf("ParseNetworks(%q) = %v, %v", tt.list, got, err)
		}
		for i, n := range got {
			if n.Name != tt.want[i] {
				t.Errorf("ParseNetworks(%q)[%d] = %s, want %s", tt.list, i, n.Name, tt.want[i])
			}
		}
	}
}

// The throttled profiles are Lighthouse's, converted as its
// lib/emulation.js converts them: latency = RTT × 3.75, throughput =
// floor(Kbps × 0.9 × 1024 / 8) bytes per second.
func TestNetworkProfilesAreLighthouses(t *testing.T) {
	lighthouse := map[string]struct{ rttMs, downKbps, upKbps float64 }{
		"slow-4g":    {150, 1.6 * 1024, 750}, // throttling.mobileSlow4G
		"regular-3g": {300, 700, 700},        // throttling.mobileRegular3G
	}
	for _, n := range NetworkProfiles {
		if n.Name == "none" {
			if n.Throttled() {
				t.Errorf("none is throttled: %+v", n)
			}
			continue
		}
		lh, ok := lighthouse[n.Name]
		if !ok {
			t.Errorf("profile %s has no Lighthouse preset to check against", n.Name)
			continue
		}
		if n.LatencyMS != lh.rttMs*3.75 || n.DownloadBps != math.Floor(lh.downKbps*0.9*1024/8) || n.UploadBps != math.Floor(lh.upKbps*0.9*1024/8) {
			t.Errorf("%s = %+v, want Lighthouse's %+v", n.Name, n, lh)
		}
		if !strings.Contains(n.Source, "lighthouse") {
			t.Errorf("%s names no source: %q", n.Name, n.Source)
		}
	}
}

func TestBrowserHost(t *testing.T) {
	tests := []struct{ proxy, host, wantName, wantRule string }{
		{"http://127.0.0.1:8080", "", "", ""},
		{"http://127.0.0.1:8080", "127.0.0.1", "", ""},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", "", ""},
		{"http://127.0.0.1:8080", "www.pub.example", "www.pub.example", "MAP www.pub.example 127.0.0.1:8080"},
		{"https://203.0.113.5", "www.pub.example", "www.pub.example", "MAP www.pub.example 203.0.113.5:443"},
		{"http://staging.example", "www.pub.example:8443", "www.pub.example", "MAP www.pub.example staging.example:80"},
		{"http://[::1]:9000", "www.pub.example", "www.pub.example", "MAP www.pub.example [::1]:9000"},
	}
	for _, tt := range tests {
		base, err := url.Parse(tt.proxy)
		if err != nil {
			t.Fatal(err)
		}
		name, rule := browserHost(base, tt.host)
		if name != tt.wantName || rule != tt.wantRule {
			t.Errorf("browserHost(%s, %q) = %q, %q; want %q, %q", tt.proxy, tt.host, name, rule, tt.wantName, tt.wantRule)
		}
	}
}

func TestFindChromiumNamesTheFlag(t *testing.T) {
	_, err := FindChromium("/nonexistent/chromium")
	if err == nil || !strings.HasPrefix(err.Error(), "-chrome /nonexistent/chromium: ") {
		t.Fatalf("err = %v", err)
	}
}

// browserReport is a -proxy report with one HTTP row and its loads, one of
// which Chromium received in another coding.
func browserReport() *DaemonReport {
	cpu := 1.25
	return &DaemonReport{Proxy: "http://127.0.0.1:1", Path: "/a.html", Runs: 1,
		Results: []DaemonResult{{Mode: "mirror", AcceptEncoding: "br", Status: 200, DeliveredCoding: "br", VCPUMS: 3, GuestCPUMS: &cpu}},
		Browser: &BrowserRun{Browser: "Chrome/1.0", Runs: 3, Networks: []NetworkProfile{NetworkProfiles[0], NetworkProfiles[1]},
			Loads: []BrowserLoad{
				{Mode: "mirror", AcceptEncoding: "br", SentAcceptEncoding: "br, gzip", Network: "none", Status: 200, DeliveredCoding: "br",
					TransferBytes: 1300, EncodedBodyBytes: 1000, DecodedBodyBytes: 4000, TTFBMS: 2.5, WaitMS: 1.5, FCPMS: 40.25, LCPMS: 50.5, ResponseEndMS: 3.5, LoadMS: 60, Loads: 3},
				{Mode: "mirror", AcceptEncoding: "br", SentAcceptEncoding: "br, gzip", Network: "slow-4g", Status: 200, DeliveredCoding: "gzip",
					TransferBytes: 1400, EncodedBodyBytes: 1100, DecodedBodyBytes: 4000, TTFBMS: 2.5, WaitMS: 570, FCPMS: 640, LCPMS: 640, ResponseEndMS: 580, LoadMS: 700, Loads: 3},
			}}}
}

// Without -browser the JSON is what it was: no "browser" key. With it,
// each load carries its figures under stable names.
func TestBrowserJSON(t *testing.T) {
	plain := browserReport()
	plain.Browser = nil
	var b bytes.Buffer
	if err := plain.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"browser"`) {
		t.Errorf("JSON without -browser has a browser key:\n%s", b.String())
	}
	b.Reset()
	if err := browserReport().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Daemon struct {
			Results []map[string]any
			Browser struct {
				Browser  string
				Networks []map[string]any
				Loads    []map[string]any
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Daemon.Results) != 1 || doc.Daemon.Browser.Browser != "Chrome/1.0" || len(doc.Daemon.Browser.Loads) != 2 {
		t.Fatalf("JSON %s", b.String())
	}
	want := map[string]any{"mode": "mirror", "accept_encoding": "br", "sent_accept_encoding": "br, gzip", "network": "none", "ttfb_ms": 2.5,
		"wait_ms": 1.5, "fcp_ms": 40.25, "lcp_ms": 50.5, "response_end_ms": 3.5, "load_ms": 60.0, "transfer_bytes": 1300.0, "decoded_body_bytes": 4000.0}
	for k, v := range want {
		if got := doc.Daemon.Browser.Loads[0][k]; got != v {
			t.Errorf("loads[0].%s = %v, want %v", k, got, v)
		}
	}
	if n := doc.Daemon.Browser.Networks[1]; n["name"] != "slow-4g" || n["latency_ms"] != 562.5 || n["download_bytes_per_second"] != 188743.0 {
		t.Errorf("networks[1] = %v", n)
	}
}

// The table puts each load beside the CPU of the HTTP row of its mode and
// client coding, and says where Chromium got another coding.
func TestBrowserTable(t *testing.T) {
	var b bytes.Buffer
	if err := browserReport().WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"browser Chrome/1.0, network none (no emulation), slow-4g (562.5 ms latency, 188,743 B/s down, 86,400 B/s up): median of 3 loads",
		"ttfb = Navigation Timing responseStart (without the emulated latency)",
		"note: browser: mode mirror, network slow-4g: Chromium (Accept-Encoding br, gzip) received gzip where the HTTP client (Accept-Encoding br) received br",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	row := tableRow(out, "none")
	if strings.Join(row, " ") != "mirror br none 200 br 1,300 4,000 2.5 1.5 40.2 50.5 3.5 60.0 3 1.250" {
		t.Errorf("row %q", row)
	}
	if strings.Count(out, "note: browser:") != 1 {
		t.Errorf("want one note:\n%s", out)
	}
}

// tableRow are the fields of the first table line whose third field is
// network.
func tableRow(out, network string) []string {
	for line := range strings.SplitSeq(out, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[2] == network {
			return f
		}
	}
	return nil
}
