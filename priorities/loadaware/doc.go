// Package loadaware holds the plugins that place pods by the load
// Prometheus measured on the nodes, rather than by the requests of the
// pods on them:
//
//   - PrometheusScore scores nodes by any PromQL query that returns one
//     value per node (a direction, a normalization);
//   - TargetLoadPacking packs pods onto nodes until their CPU utilization
//     reaches a target, then spreads them (scheduler-plugins' Trimaran);
//   - LoadVariationRiskBalancing balances the risk, mean plus standard
//     deviation of CPU and memory utilization over a window, among nodes
//     (Trimaran);
//   - LoadHotSpot filters out nodes whose CPU or memory utilization is
//     above a threshold (off unless a threshold is set).
//
// The model is NetworkTraffic's: every query runs in the background on
// the shared source (package prommetric), once per refresh for every
// plugin and profile that sends it; PreFilter or PreScore pins the
// current tables in the cycle state; Filter and Score read a value by node
// slot and add the estimate of the pods placed since the table was taken.
// Stale or absent data makes the plugins skip: every node scores alike
// and none is filtered (fail open).
//
// Utilization is in percent of the node's capacity (CPU) or total memory,
// as node_exporter's counters measure them; a pod placed since the table
// adds its expected use: for CPU, Trimaran's prediction (the limit, else
// the request × defaultRequestsMultiplier, else defaultRequests), for
// memory its request.
package loadaware
