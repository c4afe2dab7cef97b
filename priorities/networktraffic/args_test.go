package networktraffic

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestNetworkTrafficArgsDefaults(t *testing.T) {
	secs := func(s time.Duration) prommetric.Duration { return prommetric.Duration{Duration: s * time.Second} }
	defaults := func(mutate func(*Args)) *Args {
		a := &Args{
			DeviceName: "eth0|ens.*|eno.*", TimeRange: secs(60), Direction: DirectionBoth,
			NodeNameLabel: "nodename", RefreshInterval: secs(15), StaleAfter: secs(120), Timeout: secs(5),
			MissingMetricsPolicy: prommetric.MissingMetricsNeutral,
		}
		if mutate != nil {
			mutate(a)
		}
		return a
	}
	tests := []struct {
		name string
		in   *Args
		want *Args
	}{
		{name: "empty", in: &Args{}, want: defaults(nil)},
		{
			name: "ip without a scheme",
			in:   &Args{IP: "10.0.0.7:9090"},
			want: defaults(func(a *Args) { a.PrometheusAddress = "http://10.0.0.7:9090" }),
		},
		{
			name: "ip with a scheme",
			in:   &Args{IP: "https://prom:9090"},
			want: defaults(func(a *Args) { a.PrometheusAddress = "https://prom:9090" }),
		},
		{
			name: "networkInterface is quoted into deviceName",
			in:   &Args{NetworkInterface: "eth0.100"},
			want: defaults(func(a *Args) { a.DeviceName = `eth0\.100` }),
		},
		{
			name: "timeRangeInSeconds",
			in:   &Args{TimeRangeInSeconds: new(int64(30))},
			want: defaults(func(a *Args) { a.TimeRange = secs(30) }),
		},
		{
			name: "old and new names: both kept for validation",
			in: &Args{
				PrometheusAddress: "http://a:9090", IP: "b:9090",
				DeviceName: "eth1", NetworkInterface: "eth2",
				TimeRange: secs(10), TimeRangeInSeconds: new(int64(20)),
			},
			want: defaults(func(a *Args) {
				a.PrometheusAddress, a.IP = "http://a:9090", "b:9090"
				a.DeviceName, a.NetworkInterface = "eth1", "eth2"
				a.TimeRange, a.TimeRangeInSeconds = secs(10), new(int64(20))
			}),
		},
		{
			name: "invalid timeRangeInSeconds kept for validation",
			in:   &Args{TimeRangeInSeconds: new(int64(-1))},
			want: defaults(func(a *Args) { a.TimeRange, a.TimeRangeInSeconds = prommetric.Duration{}, new(int64(-1)) }),
		},
		{
			name: "set values stay",
			in: &Args{
				DeviceName: "bond0", TimeRange: secs(30), Direction: DirectionReceive, NodeNameLabel: "node",
				RefreshInterval: secs(5), StaleAfter: secs(30), Timeout: secs(2), MissingMetricsPolicy: prommetric.MissingMetricsLowest,
				MaxBandwidth: 1e9, FilterAbove: 9e8, PodBandwidthEstimate: 1e6,
			},
			want: &Args{
				DeviceName: "bond0", TimeRange: secs(30), Direction: DirectionReceive, NodeNameLabel: "node",
				RefreshInterval: secs(5), StaleAfter: secs(30), Timeout: secs(2), MissingMetricsPolicy: prommetric.MissingMetricsLowest,
				MaxBandwidth: 1e9, FilterAbove: 9e8, PodBandwidthEstimate: 1e6,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.SetDefaults()
			if diff := cmp.Diff(tt.want, tt.in); diff != "" {
				t.Errorf("SetDefaults (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(defaults(nil), DefaultArgs()); diff != "" {
		t.Errorf("DefaultArgs (-want +got):\n%s", diff)
	}
}

func TestValidateNetworkTrafficArgs(t *testing.T) {
	valid := func(mutate func(*Args)) *Args {
		a := &Args{PrometheusAddress: "http://prometheus.monitoring:9090"}
		if mutate != nil {
			mutate(a)
		}
		a.SetDefaults()
		return a
	}
	tests := []struct {
		name string
		args *Args
		// want are "field: type" pairs.
		want []string
	}{
		{name: "defaults with an address", args: valid(nil)},
		{name: "https with a CA and token", args: valid(func(a *Args) {
			a.PrometheusAddress, a.TLSCAFile, a.BearerTokenFile = "https://prom/prefix", "/ca.pem", "/token"
		})},
		{name: "own query", args: valid(func(a *Args) { a.Query, a.DeviceName = "sum by (nodename) (x)", "(" })},
		{name: "a token over http", args: valid(func(a *Args) { a.BearerTokenFile = "/token" }),
			want: []string{"bearerTokenFile: Invalid value"}},
		{name: "no address", args: valid(func(a *Args) { a.PrometheusAddress = "" }),
			want: []string{"prometheusAddress: Required value"}},
		{name: "address without scheme", args: valid(func(a *Args) { a.PrometheusAddress = "prometheus:9090" }),
			want: []string{"prometheusAddress: Invalid value"}},
		{name: "address with a query", args: valid(func(a *Args) { a.PrometheusAddress = "http://p:9090/?x=1" }),
			want: []string{"prometheusAddress: Invalid value"}},
		{name: "ftp", args: valid(func(a *Args) { a.PrometheusAddress = "ftp://p" }),
			want: []string{"prometheusAddress: Invalid value"}},
		{name: "ip and prometheusAddress", args: valid(func(a *Args) { a.IP = "p:9090" }),
			want: []string{"ip: Forbidden"}},
		{name: "networkInterface and deviceName", args: valid(func(a *Args) { a.DeviceName, a.NetworkInterface = "a", "b" }),
			want: []string{"networkInterface: Forbidden"}},
		{name: "timeRangeInSeconds and timeRange", args: valid(func(a *Args) {
			a.TimeRange, a.TimeRangeInSeconds = prommetric.Duration{Duration: time.Minute}, new(int64(60))
		}), want: []string{"timeRangeInSeconds: Forbidden"}},
		{name: "negative timeRangeInSeconds", args: valid(func(a *Args) { a.TimeRangeInSeconds = new(int64(-1)) }),
			want: []string{"timeRangeInSeconds: Invalid value"}},
		{name: "bad regexp", args: valid(func(a *Args) { a.DeviceName = "eth[0" }),
			want: []string{"deviceName: Invalid value"}},
		{name: "short timeRange", args: valid(func(a *Args) { a.TimeRange = prommetric.Duration{Duration: 500 * time.Millisecond} }),
			want: []string{"timeRange: Invalid value"}},
		{name: "sub-millisecond timeRange", args: valid(func(a *Args) { a.TimeRange = prommetric.Duration{Duration: time.Second + time.Microsecond} }),
			want: []string{"timeRange: Invalid value"}},
		{name: "direction", args: valid(func(a *Args) { a.Direction = "up" }),
			want: []string{"direction: Unsupported value"}},
		{name: "label with a dash", args: valid(func(a *Args) { a.NodeNameLabel = "node-name" }),
			want: []string{"nodeNameLabel: Invalid value"}},
		{name: "reserved label", args: valid(func(a *Args) { a.NodeNameLabel = "__name__" }),
			want: []string{"nodeNameLabel: Invalid value"}},
		{name: "label breaking out", args: valid(func(a *Args) { a.NodeNameLabel = "nodename) or (x" }),
			want: []string{"nodeNameLabel: Invalid value"}},
		{name: "blank query", args: valid(func(a *Args) { a.Query = "  " }),
			want: []string{"query: Invalid value"}},
		{name: "fast refresh", args: valid(func(a *Args) { a.RefreshInterval = prommetric.Duration{Duration: 100 * time.Millisecond} }),
			want: []string{"refreshInterval: Invalid value"}},
		{name: "staleAfter not above refreshInterval", args: valid(func(a *Args) { a.StaleAfter = prommetric.Duration{Duration: 15 * time.Second} }),
			want: []string{"staleAfter: Invalid value"}},
		{name: "negative timeout", args: valid(func(a *Args) { a.Timeout = prommetric.Duration{Duration: -time.Second} }),
			want: []string{"timeout: Invalid value"}},
		{name: "negative bandwidths", args: valid(func(a *Args) {
			a.MaxBandwidth, a.FilterAbove, a.PodBandwidthEstimate = -1, -1, -1
		}), want: []string{"maxBandwidth: Invalid value", "filterAbove: Invalid value", "podBandwidthEstimate: Invalid value"}},
		{name: "policy", args: valid(func(a *Args) { a.MissingMetricsPolicy = "ignore" }),
			want: []string{"missingMetricsPolicy: Unsupported value"}},
		{name: "CA file with http", args: valid(func(a *Args) { a.TLSCAFile = "/ca.pem" }),
			want: []string{"tlsCAFile: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateArgs(tt.args)
			var got []string
			if err != nil {
				agg, ok := err.(utilerrors.Aggregate)
				if !ok {
					t.Fatalf("error %T, want an aggregate of field errors", err)
				}
				for _, e := range agg.Errors() {
					fe, ok := e.(*field.Error)
					if !ok {
						t.Fatalf("error %T (%v), want a *field.Error", e, e)
					}
					got = append(got, fe.Field+": "+fe.Type.String())
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

// A password in the address is never echoed in an error.
func TestValidateNetworkTrafficArgsRedactsPassword(t *testing.T) {
	for _, addr := range []string{"ftp://user:s3cret@prom", "http://user:s3cret@prom:badport", "http://user:s3cret@prom/?q=1"} {
		a := &Args{PrometheusAddress: addr}
		a.SetDefaults()
		err := ValidateArgs(a)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error %v", addr, err)
		}
	}
}
