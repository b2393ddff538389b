//go:build !unix

package ledger

func cpuNanos() int64 { return 0 }
