package stats

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := slices.Clone(c.in)
		if got := Median(in, math.NaN()); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("Median reordered its argument: %v, was %v", in, c.in)
		}
	}
	if got := Median(nil, math.NaN()); !math.IsNaN(got) {
		t.Errorf("Median(nil, NaN) = %v, want NaN", got)
	}
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{3 * time.Second}, 3 * time.Second},
		{[]time.Duration{5 * time.Second, time.Second, 3 * time.Second}, 3 * time.Second},
		{[]time.Duration{4 * time.Second, time.Second, 2 * time.Second, 3 * time.Second}, 2500 * time.Millisecond},
	} {
		if got := Median(c.in, 0); got != c.want {
			t.Errorf("Median(%v, 0) = %v, want %v", c.in, got, c.want)
		}
	}
}
