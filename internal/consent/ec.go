package consent

import "github.com/ssatd/ssatd/internal/tcf"

// ECGate is what the consent signals say about the edge cookie (ts-ec):
// whether one may be created, and whether the request withdraws one
// already issued. The two differ on purpose: a request that fails closed
// (no signals in a regulated jurisdiction, an unknown jurisdiction) may
// not create an edge cookie, but does not withdraw one either.
type ECGate struct {
	Allowed   bool
	Withdrawn bool
	// EIDs: the partners' ids may go into the bid request (upstream's
	// gate_eids_by_consent, consent/mod.rs:478-520): with a TCF consent,
	// purposes 1 and 4; without one, unless GDPR applies.
	EIDs bool
}

// eidsAllowed is gate_eids_by_consent's decision.
func eidsAllowed(effective *tcf.Consent, gdprApplies bool) bool {
	if effective != nil {
		return effective.Purpose(1) && effective.Purpose(4)
	}
	return !gdprApplies
}

// ecSignals are the decoded signals upstream's EC gate reads.
type ecSignals struct {
	tcf        *tcf.Consent // the effective TCF consent; nil when none
	saleOptOut *bool        // GPP's US sale opt-out; nil when no US section says
	usp        *USPrivacy   // the US Privacy string; nil when absent or undecodable
	gpc        bool
}

// ecGate is upstream's allows_ec_creation and has_explicit_ec_withdrawal
// (IABTechLab/trusted-server crates/trusted-server-core/src/consent/
// mod.rs:541-626): GDPR needs TCF purpose 1 (storage); a US state with a
// privacy law allows unless GPC, GPP's sale opt-out or the US Privacy
// string opts out, then follows TCF, GPP, US Privacy in that order, and
// blocks without any signal; non-regulated allows; unknown blocks.
func ecGate(j Jurisdiction, s ecSignals) ECGate {
	storage := func() bool { return s.tcf.Purpose(1) }
	switch {
	case j == JurisdictionGDPR:
		return ECGate{Allowed: s.tcf != nil && storage(), Withdrawn: s.tcf != nil && !storage()}
	case j.IsUSState():
		optedOut := s.gpc || (s.saleOptOut != nil && *s.saleOptOut) || (s.usp != nil && s.usp.OptOutSale == 'Y')
		switch {
		case optedOut:
			return ECGate{Withdrawn: true}
		case s.tcf != nil:
			return ECGate{Allowed: storage(), Withdrawn: !storage()}
		case s.saleOptOut != nil:
			return ECGate{Allowed: !*s.saleOptOut}
		case s.usp != nil:
			return ECGate{Allowed: s.usp.OptOutSale != 'Y'}
		}
		return ECGate{}
	case j == JurisdictionNonRegulated:
		return ECGate{Allowed: true}
	}
	return ECGate{} // unknown: fail closed, and no withdrawal
}

// decodedUSP is the US Privacy string decoded, nil when it does not
// decode.
func decodedUSP(s string) *USPrivacy {
	if s == "" {
		return nil
	}
	u, err := DecodeUSPrivacy(s)
	if err != nil {
		return nil
	}
	return &u
}
