// Package prommetric is the Prometheus source every metric-driven plugin
// reads (NetworkTraffic, PrometheusScore, TargetLoadPacking,
// LoadVariationRiskBalancing, LoadHotSpot).
//
// The model:
//
//	Pool (one per registry, so per daemon)
//	  └─ Metric per distinct (Prometheus, query, refresh, staleAfter, timeout)
//	       Run (background, every refreshInterval, once however many
//	       plugins and profiles share it)
//	         └─ Client.Query: ONE instant query for all nodes, bounded by timeout
//	              └─ Table{node → value, time} ──atomic pointer swap──► current
//	Plugins: PreFilter / PreScore pin a usable Table in the cycle state;
//	Filter / Score read it, never a query, never a lock.
//
// A query runs once per refresh however many plugins read its answer:
// TargetLoadPacking and LoadHotSpot, both on CPU utilization, share one.
// No query ever runs in a scheduling cycle, and a failing, slow or absent
// Prometheus only ages the Table: once it is older than staleAfter the
// plugins treat every node alike (fail open). Failures are logged once per
// streak, recovery once, stale data once.
//
// Pods placed since a Table was taken are not in it: Recent finds them
// (the scheduler's assumed pods included) so that each plugin adds its own
// estimate of their load, and a burst spreads instead of landing on the
// one quiet node.
package prommetric
