// Package networktraffic is the NetworkTraffic plugin: it scores nodes by
// the network traffic Prometheus measured on them, so that new pods go to
// quiet nodes, and with filterAbove it also filters out overloaded ones.
//
// The model:
//
//	Run (background, every refreshInterval)
//	  └─ Source.Fetch: ONE instant query for all nodes, bounded by timeout
//	       └─ Sample{node → bytes/s, time}  ──atomic pointer swap──►  current
//	PreFilter / PreScore: pin current (if younger than staleAfter) in the
//	  cycle state, or Skip when there is nothing to rank by
//	Filter / Score: map lookup + the pile-on estimate, no I/O, no lock
//	NormalizeScore: 100 − 100 × bw / maxBW over the feasible nodes
//
// No query ever runs in a scheduling cycle: the cycle reads the last sample
// through an atomic pointer, and a failing, slow or absent Prometheus only
// ages that sample. Once it is older than staleAfter it is not used: every
// node then scores the same, and scheduling goes on as if the plugin were
// not configured. A node missing from an otherwise usable sample gets the
// missingMetricsPolicy score.
//
// The default query takes the rate of node_exporter's byte counters over
// timeRange, sums it per scrape target and joins the targets to node names
// through node_uname_info (see Query). Node names never enter a query;
// every configured value that does is quoted or validated first.
//
// Pile-on: a sample lags behind placements. Pods bound to a node after its
// sample was taken (the scheduler's assumed pods included, which the
// snapshot holds as soon as a cycle picks a node) add podBandwidthEstimate,
// or their yardmaster.io/bandwidth annotation, to the node's traffic until
// the next sample, so a burst of pods spreads instead of landing on the one
// quiet node.
//
// Score returns the node's effective traffic and NormalizeScore maps it to
// [0, 100] over all feasible nodes, so the plugin scores correctly even in
// a profile that enables it only at score (as most published
// configurations do) and PreScore never runs.
package networktraffic
