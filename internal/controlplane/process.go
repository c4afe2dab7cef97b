package controlplane

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// stopGracePeriod is how long a component gets between SIGTERM and SIGKILL.
// kube-apiserver drains in about a second when nothing holds it; a test
// suite should not wait longer for a process whose state is thrown away.
const stopGracePeriod = 5 * time.Second

// logTailBytes is how much of a component's log goes into a start error.
const logTailBytes = 4 << 10

// errPortInUse marks a start that lost the race for a port picked as free.
var errPortInUse = errors.New("port already in use")

// exitError describes a component that ended while it should be serving,
// with the tail of its log; it wraps errPortInUse when the log says so.
func exitError(p *procgroup.Process) error {
	_, waitErr := p.Exited()
	tail := p.LogTail(logTailBytes)
	err := fmt.Errorf("%s exited early (%v); tail of %q:\n%s", p.Name(), waitErr, p.LogPath(), tail)
	if strings.Contains(tail, "address already in use") {
		return fmt.Errorf("%w: %w", errPortInUse, err)
	}
	return err
}

// withFlags returns defaults without the flags that extra names, followed by
// extra: a flag given in extra replaces the default of the same name even
// where the component would add the two up (list flags such as
// --authorization-mode or --runtime-config, given twice, accumulate).
// Within extra every flag is kept, so a list flag given there twice, say
// GenericWorkloadAPIServerFlags' --runtime-config beside a caller's own,
// reaches the component twice and adds up. Defaults are all written
// --name=value.
func withFlags(defaults, extra []string) []string {
	named := map[string]bool{}
	for _, f := range extra {
		if name, ok := flagName(f); ok {
			named[name] = true
		}
	}
	out := make([]string, 0, len(defaults)+len(extra))
	for _, f := range defaults {
		if name, ok := flagName(f); ok && named[name] {
			continue
		}
		out = append(out, f)
	}
	return append(out, extra...)
}

// flagName returns the name of a flag written -name, --name or
// --name=value.
func flagName(arg string) (string, bool) {
	if !strings.HasPrefix(arg, "-") {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name, name != ""
}
