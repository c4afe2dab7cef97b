package binder

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// NoteLengthLimit is the longest note the API server accepts in an event
// (events.k8s.io/v1 note, core/v1 message: 1,024 bytes). A longer one is
// refused (422), and the event is lost: a pod turned away by many nodes
// with distinct reasons would get no FailedScheduling event at all.
const NoteLengthLimit = 1024

// truncatedSuffix marks a note cut to NoteLengthLimit, as kube-scheduler
// marks it.
const truncatedSuffix = " ..."

// TruncateNote returns note as it fits in an event: unchanged when it
// does, else cut to NoteLengthLimit bytes at a character boundary and
// ending in " ...", as kube-scheduler truncates FailedScheduling messages.
func TruncateNote(note string) string {
	if len(note) <= NoteLengthLimit {
		return note
	}
	cut := NoteLengthLimit - len(truncatedSuffix)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + truncatedSuffix
}

// noteLimiter is an event recorder whose notes always fit (TruncateNote),
// whoever writes them: the scheduler, or a plugin through its Handle.
type noteLimiter struct{ events.EventRecorder }

// Eventf implements events.EventRecorder.
func (r noteLimiter) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if len(args) > 0 {
		note = fmt.Sprintf(note, args...)
	}
	// The note goes as an argument: it is no longer a format.
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", TruncateNote(note))
}
