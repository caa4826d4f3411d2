package proxy

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/ssatd/ssatd/internal/compress"
	bodypipe "github.com/ssatd/ssatd/internal/pipeline"
)

// Trusted Server's SSAT compression measurement (IABTechLab/trusted-server
// issue #858, the 2026-07-09 measurement comment): the guarded query
// parameter ?__ts_ssat_compression=identity|mirror and the x-ts-ssat-*
// response headers whose names and value formats are given there. The
// experiment's code is not in the upstream tree; only those observed
// headers are. With debug.diagnostics_headers on, ssatd accepts the same
// parameter and sends the same names beside its own X-Ssatd-* ones, so
// one `ssatd measure -proxy` run reads a Fastly deployment and ssatd alike.
const (
	TSModeParam = "__ts_ssat_compression"

	TSMode         = "X-Ts-Ssat-Compression-Mode"        // identity | mirror
	TSDelivery     = "X-Ts-Ssat-Delivery-Compression"    // fastly-dynamic | in-guest
	TSOriginAE     = "X-Ts-Ssat-Origin-Accept-Encoding"  // as sent to the origin
	TSOriginCoding = "X-Ts-Ssat-Origin-Content-Encoding" // identity when none
	TSOutputCoding = "X-Ts-Ssat-Output-Content-Encoding" // what the guest emitted
	// Known only once the body is processed; trailers on ssatd (below).
	// The origin body as the guest read it: the coded bytes in mirror mode
	// (178351 against 1365106 identity in the measurement), so not
	// X-Ssatd-Processed-Bytes, which counts the rewritten text.
	TSProcessedBytes   = "X-Ts-Ssat-Processed-Bytes" // decimal bytes
	TSProcessingMillis = "X-Ts-Ssat-Processing-Ms"   // milliseconds, 3 decimals ("9.045")
	TSVCPUMillis       = "X-Ts-Ssat-Fastly-Vcpu-Ms"  // whole milliseconds ("19")
)

// tsOverride reads ?__ts_ssat_compression: identity is ssatd's offload.
func tsOverride(q url.Values) (mode, bool) {
	switch q.Get(TSModeParam) {
	case "identity":
		return modeOffload, true
	case "mirror":
		return modeMirror, true
	}
	return "", false
}

// tsModeName is the mode as upstream names it.
func tsModeName(m mode) string {
	if m == modeOffload {
		return "identity"
	}
	return string(modeMirror)
}

// applyTSDiagnostics sets the x-ts-ssat-* headers known before the body
// and declares the three known after it as trailers. Upstream's values
// are headers, which a streaming guest can only give by holding the whole
// body back; ssatd streams, so it sends them as HTTP trailers (RFC 9110
// §6.5), as it sends its own X-Ssatd-Processed-Bytes and the others.
func applyTSDiagnostics(resp *http.Response, x *exchange, out compress.Coding, platform string, canHint bool) {
	h := resp.Header
	h.Set(TSMode, tsModeName(x.mode))
	delivery := deliveryOf(x.mode, out, platform, canHint)
	if delivery == platform {
		// The platform's dynamic compression, as Fastly's is named upstream;
		// X-Ssatd-Delivery-Compression names ssatd's platform.
		delivery = "fastly-dynamic"
	}
	h.Set(TSDelivery, delivery)
	h.Set(TSOriginAE, x.originAE)
	h.Set(TSOriginCoding, orIdentityCoding(x.originCoding))
	h.Set(TSOutputCoding, string(out))
	if resp.Trailer == nil {
		resp.Trailer = http.Header{}
	}
	resp.Trailer[TSProcessedBytes] = nil
	resp.Trailer[TSProcessingMillis] = nil
	resp.Trailer[TSVCPUMillis] = nil
}

// setTSTrailers fills the end-of-body figures from the page's Result. The vCPU
// figure is guest CPU × compute.cpu_scale in whole milliseconds, as
// Fastly's elapsed_vcpu_ms gives it (u64 milliseconds:
// https://www.fastly.com/documentation/reference/compute/sdks/rust/fastly/compute_runtime/fn.elapsed_vcpu_ms/).
func (g *Guest) setTSTrailers(t http.Header, res bodypipe.Result) {
	t.Set(TSProcessedBytes, strconv.FormatInt(res.InBytes, 10))
	t.Set(TSProcessingMillis, strconv.FormatFloat(millis(res.GuestTime), 'f', 3, 64))
	if res.CPUMeasured {
		t.Set(TSVCPUMillis, strconv.FormatInt(g.platformCPU(res.CPU).Milliseconds(), 10))
	}
}

func orIdentityCoding(s string) string {
	if s == "" {
		return string(compress.Identity)
	}
	return s
}
