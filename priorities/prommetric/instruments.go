package prommetric

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Names of the instruments, kept from NetworkTraffic's, which had them first.
const (
	queryDurationMetric = "yardmaster_prometheus_query_duration_seconds"
	queryErrorsMetric   = "yardmaster_prometheus_query_errors_total"
	dataAgeMetric       = "yardmaster_prometheus_data_age_seconds"
)

// instruments are the metrics' own metrics. Every Metric of a registry
// (several plugins, several profiles) shares the query histogram and error
// counter, and the age gauge reports the oldest data any of them has.
type instruments struct {
	queryDuration prometheus.Histogram
	queryErrors   prometheus.Counter
}

func newInstruments(reg prometheus.Registerer, age func() float64) (*instruments, error) {
	m := &instruments{}
	dur, err := register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    queryDurationMetric,
		Help:    "Duration of the Prometheus queries of the metric plugins (NetworkTraffic, PrometheusScore, TargetLoadPacking, LoadVariationRiskBalancing, LoadHotSpot), failed ones included.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}))
	if err != nil {
		return nil, err
	}
	errs, err := register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: queryErrorsMetric,
		Help: "Prometheus queries of the metric plugins that failed: unreachable, timed out, an error answer, or no usable series.",
	}))
	if err != nil {
		return nil, err
	}
	ages, err := register(reg, &ageCollector{desc: prometheus.NewDesc(dataAgeMetric,
		"Age of the oldest data a metric plugin (NetworkTraffic, PrometheusScore, the load plugins) scores with, in seconds; +Inf before the first successful query.", nil, nil)})
	if err != nil {
		return nil, err
	}
	ages.add(age)
	m.queryDuration, m.queryErrors = dur, errs
	return m, nil
}

// register registers c, or returns the collector of the same kind
// registered before it.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	var zero C
	return zero, fmt.Errorf("register the Prometheus query metrics: %w", err)
}

// ageCollector reports the largest age among the registered functions.
type ageCollector struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	ages []func() float64
}

func (c *ageCollector) add(f func() float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ages = append(c.ages, f)
}

// Describe implements prometheus.Collector.
func (c *ageCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *ageCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	oldest := math.Inf(-1)
	for _, f := range c.ages {
		oldest = max(oldest, f())
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, oldest)
}
