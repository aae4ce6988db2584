//go:build !unix

package voting

import "time"

// processCPU is unknown off unix: benchmarks report 0.
func processCPU() time.Duration { return 0 }
