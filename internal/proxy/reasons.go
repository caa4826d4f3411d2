package proxy

import "github.com/ssatd/ssatd/internal/family"

// reason is family.Reason under the guest's own names: the closed set of
// why a request did not end well lives in the seam (internal/family,
// reason.go) so that route families can name theirs, and recordFailure
// (errors.go) stays its one writer. Every name is documented in
// docs/behaviour.md, "Errors" (TestReasonsDocumented).
type reason = family.Reason

const (
	reasonNone               = family.None
	reasonUnreachable        = family.Unreachable
	reasonHeaderTimeout      = family.HeaderTimeout
	reasonOrigin304          = family.Origin304
	reasonPartialContent     = family.PartialContent
	reasonSwitchingProtocols = family.SwitchingProtocols
	reasonOverloaded         = family.Overloaded
	reasonClientShare        = family.ClientShare
	reasonTooLarge           = family.TooLarge
	reasonDecodedTooLarge    = family.DecodedTooLarge
	reasonTruncated          = family.Truncated
	reasonCorrupt            = family.Corrupt
	reasonOriginFailed       = family.OriginFailed
	reasonOriginIdle         = family.OriginIdle
	reasonPipelinePanic      = family.PipelinePanic
	reasonClientGone         = family.ClientGone
	reasonConnectRefused     = family.ConnectRefused
	reasonBadTarget          = family.BadTarget
	reasonBadMethod          = family.BadMethod
	reasonRequestTE          = family.RequestTE
	reasonLoop               = family.Loop
	reasonURLTooLong         = family.URLTooLong
	reasonHeaderOverflow     = family.HeaderOverflow
	reasonCPULimit           = family.CPULimit
	reasonRuntimeLimit       = family.RuntimeLimit
	reasonUnauthorized       = family.Unauthorized

	reasonCount = family.ReasonCount // the number of reasons; not a reason
)
