package family

// Reason names why a request did not end well: the access line's reason
// field and the reason label of ssatd_failures_total. It is a closed set:
// a reason is one of the constants below, its name comes from reasonNames,
// and the guest's recordFailure (internal/proxy, errors.go) is the only
// place a reason reaches a log field or a metric, so no other string can
// become that label. A route family names its reason in an Answer and
// hands it to Seam.Refuse; it never writes one itself. Every name is
// documented in docs/behaviour.md, "Errors" (TestReasonsDocumented).
type Reason uint8

const (
	None Reason = iota // the request has not failed

	// Before the origin answered (failureOf, originRequestFailure).
	Unreachable
	HeaderTimeout
	// The origin's answer, refused before the headers went out.
	Origin304
	PartialContent
	SwitchingProtocols
	Overloaded
	ClientShare
	// The origin body, before or after the headers (bodyFailureReason).
	TooLarge
	DecodedTooLarge
	Truncated
	Corrupt
	OriginFailed
	OriginIdle
	// The guest itself and the client.
	PipelinePanic
	ClientGone
	// Requests refused before any origin request (the guest's refusals).
	ConnectRefused
	BadTarget
	BadMethod
	RequestTE
	Loop
	// Fastly's limits under compute.limits = "fastly" (computelimits.go).
	URLTooLong
	HeaderOverflow
	CPULimit
	RuntimeLimit
	// tsjs callbacks refused for their input (internal/tsjs): 4xx, not
	// failures.
	AuctionMethod
	AuctionContentType
	AuctionTooLarge
	AuctionBadBody
	PageBidsPreflight
	PageBidsCrossSite
	PageBidsNoSlots
	PageBidsFormat
	// [[handlers]] Basic authentication (internal/basicauth): 401, or
	// 404 for an admin path no handler covers; not failures.
	Unauthorized

	// ReasonCount is the number of reasons; not a reason. Reasons run
	// from None+1 to ReasonCount-1.
	ReasonCount
)

var reasonNames = [ReasonCount]string{
	None:               "",
	Unreachable:        "origin_unreachable",
	HeaderTimeout:      "origin_header_timeout",
	Origin304:          "origin_304_to_eligible",
	PartialContent:     "origin_partial_content",
	SwitchingProtocols: "origin_switching_protocols",
	Overloaded:         "overloaded",
	ClientShare:        "client_share_exceeded",
	TooLarge:           "origin_body_too_large",
	DecodedTooLarge:    "decoded_body_too_large",
	Truncated:          "origin_body_truncated",
	Corrupt:            "origin_body_corrupt",
	OriginFailed:       "origin_body_failed",
	OriginIdle:         "origin_idle_timeout",
	PipelinePanic:      "pipeline_panic",
	ClientGone:         "client_gone",
	ConnectRefused:     "connect_refused",
	BadTarget:          "bad_request_target",
	BadMethod:          "bad_method",
	RequestTE:          "request_transfer_encoding",
	Loop:               "loop_detected",
	URLTooLong:         "compute_url_too_long",
	HeaderOverflow:     "compute_header_overflow",
	CPULimit:           "compute_cpu_limit",
	RuntimeLimit:       "compute_runtime_limit",

	AuctionMethod:      "auction_method",
	AuctionContentType: "auction_content_type",
	AuctionTooLarge:    "auction_body_too_large",
	AuctionBadBody:     "auction_bad_request",
	PageBidsPreflight:  "page_bids_preflight",
	PageBidsCrossSite:  "page_bids_cross_site",
	PageBidsNoSlots:    "page_bids_not_configured",
	PageBidsFormat:     "page_bids_format",
	Unauthorized:       "unauthorized",
}

// String is the reason's name in logs and metrics; "" for None and for a
// value outside the set, which no constant is.
func (r Reason) String() string {
	if r >= ReasonCount {
		return ""
	}
	return reasonNames[r]
}
