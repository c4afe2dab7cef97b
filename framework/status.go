package framework

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// Code is the outcome of a plugin call.
type Code int

const (
	// Success means the plugin ran and the pod may proceed. A nil *Status is Success.
	Success Code = iota
	// Unschedulable means the pod does not fit this node now, but might after
	// the cluster changes (a pod leaves, a taint is removed).
	Unschedulable
	// UnschedulableAndUnresolvable means the pod can never fit this node
	// whatever else changes on it (the node is excluded by name or selector).
	UnschedulableAndUnresolvable
	// Error means the plugin failed; the attempt is retried with backoff.
	Error
	// Skip, returned by PreFilter or PreScore, means the plugin has nothing to
	// do for this pod: its Filter or Score is not called in this cycle.
	// Returned by PreBindPreFlight, it means PreBind has nothing to do.
	Skip
	// Wait, returned by Permit, means the pod keeps its reservation and
	// waits until every plugin that asked it to wait allows it, one
	// rejects it, or a plugin's timeout runs out.
	Wait
)

var codeNames = [...]string{"Success", "Unschedulable", "UnschedulableAndUnresolvable", "Error", "Skip", "Wait"}

// String returns the code's name.
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// Status is the result of a plugin call: a code, the reasons a user reads,
// and the error behind an Error code. A nil *Status means Success.
//
// A plugin may return one shared Status for a reason that does not depend
// on its input, so a Status never changes once made: who produced it is
// kept beside it, not in it.
type Status struct {
	code    Code
	reasons []string
	err     error
}

// skipStatus is the one Skip without reasons: PreFilter and PreScore
// plugins return it for most pods, in every cycle.
var skipStatus = &Status{code: Skip}

// NewStatus returns a status with the given code and reasons. A Skip
// without reasons is a shared status, like every status is once returned
// (see Status).
func NewStatus(code Code, reasons ...string) *Status {
	if code == Skip && len(reasons) == 0 {
		return skipStatus
	}
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps err in a Status of code Error. A nil err gives nil.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the status code; Success for a nil status.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// IsSuccess reports whether the status is Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip reports whether the status is Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsWait reports whether the status is Wait.
func (s *Status) IsWait() bool { return s.Code() == Wait }

// IsRejected reports whether the pod was found not to fit.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable
}

// Reasons returns the reasons, one per failed check.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons into one line.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.reasons, ", ")
}

// Err returns the error behind an Error status, or an error made of the
// message for any other non-success status.
func (s *Status) Err() error {
	if s.IsSuccess() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// UnavailableMessage renders kube-scheduler's account of the nodes a pod
// fits none of: "0/5 nodes are available: 2 Insufficient cpu, 3 node(s)
// were unschedulable.", each reason with its count of nodes, sorted.
func UnavailableMessage(numAllNodes int, counts map[string]int) string {
	parts := make([]string, 0, len(counts))
	for reason, n := range counts {
		parts = append(parts, strconv.Itoa(n)+" "+reason)
	}
	sort.Strings(parts)
	return "0/" + strconv.Itoa(numAllNodes) + " nodes are available: " + strings.Join(parts, ", ") + "."
}
