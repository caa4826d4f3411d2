package measure

import (
	"fmt"
	"strings"
)

// verdictByteTolerance is the byte penalty offload may cost and still be
// called a plain win: a tolerance for a difference too small to weigh
// against the CPU, not a typical figure (docs/measuring.md, "The verdict").
const verdictByteTolerance = 0.05

// Verdicts, per client coding.
const (
	VerdictOffload  = "offload"
	VerdictMirror   = "mirror"
	VerdictTradeOff = "trade-off"
)

// offloadBytes is, for a client getting c, the total bytes the edge
// delivers with offload and the total the guest emits with c's mirror.
func offloadBytes(s Summary, c string) (offload, mirror int64) {
	return s.TotalDeliveredBytes[c], s.TotalOutBytes[mirrorModes[c]]
}

// verdict weighs offload's guest CPU change (an external edge, the origin
// honouring identity) against its byte change, both as fractions of
// mirror:
//   - offload saves no CPU: mirror;
//   - it saves CPU and costs at most verdictByteTolerance more bytes: offload;
//   - it costs more bytes than that, but saves a larger fraction of CPU
//     than it adds in bytes: trade-off; a smaller fraction: mirror.
func verdict(cpuChange, byteChange float64) string {
	switch {
	case cpuChange >= 0:
		return VerdictMirror
	case byteChange <= verdictByteTolerance+1e-9: // 105/100 - 1 is a hair over 0.05
		return VerdictOffload
	case -cpuChange > byteChange:
		return VerdictTradeOff
	}
	return VerdictMirror
}

// offloadVerdicts fills the summary's byte changes and verdicts for each
// client coding with figures for both mirror CPU and mirror bytes.
func offloadVerdicts(s *Summary) {
	s.OffloadByteChange = map[string]float64{}
	s.OffloadVerdict = map[string]string{}
	for _, c := range deliveryCodings {
		offload, mirror := offloadBytes(*s, c)
		mirrorCPU := s.MedianCPUMS[mirrorModes[c]]
		if mirror == 0 || mirrorCPU == 0 {
			continue
		}
		bc := float64(offload)/float64(mirror) - 1
		s.OffloadByteChange[c] = bc
		s.OffloadVerdict[c] = verdict(s.MedianCPUMS[ModeIdentity]/mirrorCPU-1, bc)
	}
}

// VerdictLine is the one-line reading of the offload table.
func (s Summary) VerdictLine() string {
	var parts []string
	for _, c := range deliveryCodings {
		v, ok := s.OffloadVerdict[c]
		if !ok {
			parts = append(parts, c+": no figures")
			continue
		}
		mirror := s.MedianCPUMS[mirrorModes[c]]
		parts = append(parts, fmt.Sprintf("%s: %s (guest CPU %s, bytes %+.1f%%)", c, strings.ToUpper(v),
			change(s.MedianCPUMS[ModeIdentity], mirror), s.OffloadByteChange[c]*100))
	}
	return fmt.Sprintf("verdict over %d pages, offload with an external edge against mirror (offload if it saves CPU for at most %+.0f%% bytes; a trade-off if it saves more %% CPU than it adds %% bytes): %s",
		s.Pages, verdictByteTolerance*100, strings.Join(parts, "; "))
}

// byteCell is the offload table's bytes column for a client getting c.
func byteCell(s Summary, c string) string {
	offload, mirror := offloadBytes(s, c)
	ch := "n/a"
	if mirror > 0 {
		ch = fmt.Sprintf("%+.1f%%", (float64(offload)/float64(mirror)-1)*100)
	}
	return fmt.Sprintf("%s vs %s (%s)", group(offload), group(mirror), ch)
}
