package app

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/yardmaster-io/yardmaster/config"
)

func TestServePprof(t *testing.T) {
	tests := []struct {
		name       string
		flag       bool
		addr       string
		fileSaysOn bool
		want       bool
	}{
		{name: "defaults: the file's true alone is not enough", flag: false, addr: DefaultHTTPBindAddress, fileSaysOn: true, want: false},
		{name: "flag and file", flag: true, addr: DefaultHTTPBindAddress, fileSaysOn: true, want: true},
		{name: "the file turns it off", flag: true, addr: DefaultHTTPBindAddress, fileSaysOn: false, want: false},
		{name: "no endpoint", flag: true, addr: "", fileSaysOn: true, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.EnableProfiling = tc.fileSaysOn
			if got := servePprof(Options{EnableProfiling: tc.flag, HTTPBindAddress: tc.addr}, cfg); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// What client-go logs through klog arrives in zap, structured, at the
// matching level.
func TestKlogSink(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	l := newKlogLogger(zap.New(core))

	l.Info("successfully acquired lease", "lock", "kube-system/yardmaster")
	l.V(4).Info("renewed", "lock", "x") // debug: below the level
	l.WithName("leaderelection").WithValues("identity", "a").Error(errors.New("boom"), "failed to renew lease", 7, "odd", "last")

	type entry struct {
		Level   zapcore.Level
		Logger  string
		Message string
		Fields  map[string]any
	}
	var got []entry
	for _, e := range logs.All() {
		got = append(got, entry{e.Level, e.LoggerName, e.Message, e.ContextMap()})
	}
	want := []entry{
		{zapcore.InfoLevel, "client-go", "successfully acquired lease", map[string]any{"lock": "kube-system/yardmaster"}},
		{zapcore.ErrorLevel, "client-go.leaderelection", "failed to renew lease", map[string]any{
			// 7 is not a key: kept as a value, and "odd" starts the next pair.
			"identity": "a", "!BADKEY": int64(7), "odd": "last", "error": "boom",
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
