package prommetric

import (
	"fmt"
	"sync"
)

// Pool shares Metrics: plugins asking for an equal Spec get one Metric,
// so its query runs once per refresh however many plugins, in however many
// profiles, read it. The registry makes one Pool per daemon.
type Pool struct {
	mu      sync.Mutex
	clients map[Connection]*Client
	metrics map[Spec]*Metric
}

// NewPool returns an empty pool.
func NewPool() *Pool {
	return &Pool{clients: map[Connection]*Client{}, metrics: map[Spec]*Metric{}}
}

// Metric returns the pool's Metric for spec, made with o when it is the
// first to ask. A nil pool makes a Metric of the caller's own.
func (p *Pool) Metric(spec Spec, o Options) (*Metric, error) {
	if p == nil {
		c, err := NewClient(spec.Connection)
		if err != nil {
			return nil, err
		}
		return NewMetric(spec, c, o)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.metrics[spec]; ok {
		return m, nil
	}
	c, ok := p.clients[spec.Connection]
	if !ok {
		var err error
		if c, err = NewClient(spec.Connection); err != nil {
			return nil, err
		}
		p.clients[spec.Connection] = c
	}
	m, err := NewMetric(spec, c, o)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", spec.Query, err)
	}
	p.metrics[spec] = m
	return m, nil
}

// Len returns how many distinct metrics the pool holds.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.metrics)
}
