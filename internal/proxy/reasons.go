package proxy

// reason names why a request did not end well: the access line's reason
// field and the reason label of ssatd_failures_total. It is a closed set:
// a reason is one of the constants below, its name comes from reasonNames,
// and recordFailure (errors.go) is the only place a reason reaches a log
// field or a metric, so no other string can become that label. Every name
// is documented in docs/behaviour.md, "Errors" (TestReasonsDocumented).
type reason uint8

const (
	reasonNone reason = iota // the request has not failed

	// Before the origin answered (failureOf, originRequestFailure).
	reasonUnreachable
	reasonHeaderTimeout
	// The origin's answer, refused before the headers went out.
	reasonOrigin304
	reasonPartialContent
	reasonSwitchingProtocols
	reasonOverloaded
	reasonClientShare
	// The origin body, before or after the headers (bodyFailureReason).
	reasonTooLarge
	reasonDecodedTooLarge
	reasonTruncated
	reasonCorrupt
	reasonOriginFailed
	reasonOriginIdle
	// The guest itself and the client.
	reasonPipelinePanic
	reasonClientGone
	// Requests refused before any origin request (ServeHTTP's refusals).
	reasonConnectRefused
	reasonBadTarget
	reasonBadMethod
	reasonRequestTE
	reasonLoop
	// Fastly's limits under compute.limits = "fastly" (computelimits.go).
	reasonURLTooLong
	reasonHeaderOverflow
	reasonCPULimit
	reasonRuntimeLimit
	// tsjs callbacks refused for their input (tsjs.go): 4xx, not failures.
	reasonAuctionMethod
	reasonAuctionContentType
	reasonAuctionTooLarge
	reasonAuctionBadBody
	reasonPageBidsPreflight
	reasonPageBidsCrossSite
	reasonPageBidsNoSlots
	reasonPageBidsFormat

	reasonCount // the number of reasons; not a reason
)

var reasonNames = [reasonCount]string{
	reasonNone:               "",
	reasonUnreachable:        "origin_unreachable",
	reasonHeaderTimeout:      "origin_header_timeout",
	reasonOrigin304:          "origin_304_to_eligible",
	reasonPartialContent:     "origin_partial_content",
	reasonSwitchingProtocols: "origin_switching_protocols",
	reasonOverloaded:         "overloaded",
	reasonClientShare:        "client_share_exceeded",
	reasonTooLarge:           "origin_body_too_large",
	reasonDecodedTooLarge:    "decoded_body_too_large",
	reasonTruncated:          "origin_body_truncated",
	reasonCorrupt:            "origin_body_corrupt",
	reasonOriginFailed:       "origin_body_failed",
	reasonOriginIdle:         "origin_idle_timeout",
	reasonPipelinePanic:      "pipeline_panic",
	reasonClientGone:         "client_gone",
	reasonConnectRefused:     "connect_refused",
	reasonBadTarget:          "bad_request_target",
	reasonBadMethod:          "bad_method",
	reasonRequestTE:          "request_transfer_encoding",
	reasonLoop:               "loop_detected",
	reasonURLTooLong:         "compute_url_too_long",
	reasonHeaderOverflow:     "compute_header_overflow",
	reasonCPULimit:           "compute_cpu_limit",
	reasonRuntimeLimit:       "compute_runtime_limit",

	reasonAuctionMethod:      "auction_method",
	reasonAuctionContentType: "auction_content_type",
	reasonAuctionTooLarge:    "auction_body_too_large",
	reasonAuctionBadBody:     "auction_bad_request",
	reasonPageBidsPreflight:  "page_bids_preflight",
	reasonPageBidsCrossSite:  "page_bids_cross_site",
	reasonPageBidsNoSlots:    "page_bids_not_configured",
	reasonPageBidsFormat:     "page_bids_format",
}

// String is the reason's name in logs and metrics.
func (r reason) String() string { return reasonNames[r] }
