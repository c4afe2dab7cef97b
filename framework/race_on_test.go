//go:build race

package framework

// raceEnabled says the race detector is on; it allocates on its own, so
// allocation counts are not checked then.
const raceEnabled = true
