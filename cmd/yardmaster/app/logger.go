package app

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// Buffering of the process log, as klog buffers kube-scheduler's (its
// --log-flush-frequency, 5 s by default): a drain logs a line per pod, and
// unbuffered each line was a write system call of its own.
const (
	logBufferSize = 256 << 10
	// logFlushInterval is how long an info or debug line may wait in the
	// buffer; warnings and errors are written at once, with what is
	// buffered before them.
	logFlushInterval = time.Second
)

// newLogger builds the process logger, writing to stderr. An empty format
// means JSON inside a cluster and console text elsewhere. Its Sync writes
// out what is buffered.
func newLogger(level, format string) (*zap.Logger, error) {
	return newLoggerTo(level, format, os.Stderr, logFlushInterval)
}

// newLoggerTo is newLogger writing to w, flushing every flush. w is only
// written: a flush never fsyncs it (stderr is a pipe or a terminal, where
// fsync fails with EINVAL).
func newLoggerTo(level, format string, w io.Writer, flush time.Duration) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	if format == "" {
		format = "console"
		if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
			format = "json"
		}
	}
	var enc zapcore.Encoder
	switch format {
	case "json":
		enc = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	case "console":
		ec := zap.NewDevelopmentEncoderConfig()
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	default:
		return nil, fmt.Errorf("--log-format: %q is not json or console", format)
	}
	out := zapcore.Lock(zapcore.AddSync(writeOnly{w}))
	buffered := &zapcore.BufferedWriteSyncer{WS: out, Size: logBufferSize, FlushInterval: flush}
	core := flushAtWarn{zapcore.NewCore(enc, buffered, zap.NewAtomicLevelAt(lvl))}
	opts := []zap.Option{zap.AddCaller(), zap.ErrorOutput(out)}
	if lvl <= zapcore.DebugLevel {
		opts = append(opts, zap.AddStacktrace(zapcore.ErrorLevel))
	}
	return zap.New(core, opts...), nil
}

// writeOnly hides every method of its writer but Write.
type writeOnly struct{ w io.Writer }

func (o writeOnly) Write(p []byte) (int, error) { return o.w.Write(p) }

// flushAtWarn writes out the buffer after every line of level warn and
// above, so that a warning or an error is never held back.
type flushAtWarn struct{ zapcore.Core }

func (c flushAtWarn) With(fields []zapcore.Field) zapcore.Core {
	return flushAtWarn{c.Core.With(fields)}
}

func (c flushAtWarn) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c flushAtWarn) Write(e zapcore.Entry, fields []zapcore.Field) error {
	if err := c.Core.Write(e, fields); err != nil {
		return err
	}
	if e.Level >= zapcore.WarnLevel {
		return c.Sync()
	}
	return nil
}

// debugVerbosity is the lowest --v that logs at debug. kube-scheduler's
// manifests commonly run at 2 or 3, which here is the default, info: what
// kube-scheduler logs at 2 to 3 (each pod placed, each cycle's reasons)
// yardmaster writes at debug or into events. Its own debug lines are
// kube-scheduler's 4 and up.
const debugVerbosity = 4

// logSettings resolves the log level and format from the flags:
// --log-level and --log-format when set, else kube-scheduler's --v and
// --logging-format mapped onto them.
func logSettings(fs *pflag.FlagSet, verbosity int, loggingFormat string) (level, format string, err error) {
	level, _ = fs.GetString("log-level")
	format, _ = fs.GetString("log-format")
	if verbosity < 0 {
		return "", "", fmt.Errorf("--v: %d is negative", verbosity)
	}
	if !fs.Changed("log-level") && fs.Changed("v") {
		level = "info"
		if verbosity >= debugVerbosity {
			level = "debug"
		}
	}
	if !fs.Changed("log-format") && fs.Changed("logging-format") {
		switch loggingFormat {
		case "text":
			format = "console"
		case "json":
			format = "json"
		default:
			return "", "", fmt.Errorf("--logging-format: %q is not text or json", loggingFormat)
		}
	}
	return level, format, nil
}

// setKlogVerbosity sets klog's -v, which filters what client-go and
// k8s.io/apiserver log before klogSink sees it.
func setKlogVerbosity(v int) {
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	_ = fs.Set("v", strconv.Itoa(v))
}

// klogSink is a logr.LogSink writing to zap. `yardmaster run` hands it to
// klog, so that what client-go logs (leader election, reflectors) comes out
// in yardmaster's format and level rather than as klog text among JSON
// lines. klog's own verbosity (--v, 0 by default) still applies first:
// only the messages it lets through arrive here.
type klogSink struct {
	logger *zap.Logger
}

var _ logr.LogSink = klogSink{}

func newKlogLogger(l *zap.Logger) logr.Logger {
	// klog's frames are the caller's callers: point zap past them.
	return logr.New(klogSink{logger: l.Named("client-go").WithOptions(zap.AddCallerSkip(2))})
}

// Init implements logr.LogSink.
func (klogSink) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink: V(0) is info, anything more verbose is
// debug.
func (s klogSink) Enabled(level int) bool { return s.logger.Core().Enabled(zapLevel(level)) }

// Info implements logr.LogSink.
func (s klogSink) Info(level int, msg string, kv ...any) {
	if ce := s.logger.Check(zapLevel(level), msg); ce != nil {
		ce.Write(fields(kv)...)
	}
}

// Error implements logr.LogSink.
func (s klogSink) Error(err error, msg string, kv ...any) {
	if ce := s.logger.Check(zapcore.ErrorLevel, msg); ce != nil {
		ce.Write(append(fields(kv), zap.Error(err))...)
	}
}

// WithValues implements logr.LogSink.
func (s klogSink) WithValues(kv ...any) logr.LogSink {
	return klogSink{logger: s.logger.With(fields(kv)...)}
}

// WithName implements logr.LogSink.
func (s klogSink) WithName(name string) logr.LogSink {
	return klogSink{logger: s.logger.Named(name)}
}

func zapLevel(v int) zapcore.Level {
	if v <= 0 {
		return zapcore.InfoLevel
	}
	return zapcore.DebugLevel
}

// fields turns logr's alternating keys and values into zap fields; a key
// that is not a string, or a key without a value, is kept under "!BADKEY",
// as slog does.
func fields(kv []any) []zap.Field {
	fs := make([]zap.Field, 0, (len(kv)+1)/2)
	for i := 0; i < len(kv); i += 2 {
		key, ok := kv[i].(string)
		if !ok || i+1 == len(kv) {
			fs = append(fs, zap.Any("!BADKEY", kv[i]))
			i--
			continue
		}
		fs = append(fs, zap.Any(key, kv[i+1]))
	}
	return fs
}
