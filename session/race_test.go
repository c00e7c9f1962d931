//go:build race

package session

// raceEnabled: the race detector makes sync.Pool drop a share of what is
// put back, so allocation counts through a pool are not zero.
const raceEnabled = true
