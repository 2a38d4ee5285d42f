// Package stats holds the median that the reports of the measuring tools
// (hack/scale, hack/sweep, the demo's startup mode, test/bench/report) take
// over their rounds.
package stats

import "slices"

// Median returns the median of xs, the mean of the middle two for an even
// count, or none when xs is empty (math.NaN() for a float, say). xs is not
// reordered.
func Median[T ~int64 | ~float64](xs []T, none T) T {
	if len(xs) == 0 {
		return none
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
