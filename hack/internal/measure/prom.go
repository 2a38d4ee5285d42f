package measure

import (
	"fmt"
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
)

// Histogram is a Prometheus histogram, possibly merged over series or the
// difference of two scrapes: the cumulative count of observations at or
// below each finite upper bound, and the count of all.
type Histogram struct {
	// Bounds are the finite upper bounds, ascending; Cumulative[i] is the
	// count of observations at most Bounds[i].
	Bounds     []float64
	Cumulative []float64
	// Count is every observation, those over the last bound included.
	Count float64
}

// MergedHistogram returns the histogram family name of families with its
// series (all label values) added up: what histogram_quantile over sum by
// (le) sees. A family that is missing or has no series gives the zero
// Histogram. It returns an error if the family is not a histogram or its
// series have different buckets.
func MergedHistogram(families map[string]*dto.MetricFamily, name string) (Histogram, error) {
	f := families[name]
	if f == nil || len(f.GetMetric()) == 0 {
		return Histogram{}, nil
	}
	if f.GetType() != dto.MetricType_HISTOGRAM {
		return Histogram{}, fmt.Errorf("%s is a %s, not a histogram", name, f.GetType())
	}
	var h Histogram
	for i, m := range f.GetMetric() {
		var bounds, cum []float64
		for _, b := range m.GetHistogram().GetBucket() {
			if math.IsInf(b.GetUpperBound(), +1) {
				continue
			}
			bounds = append(bounds, b.GetUpperBound())
			cum = append(cum, float64(b.GetCumulativeCount()))
		}
		if i == 0 {
			h.Bounds, h.Cumulative = bounds, make([]float64, len(bounds))
		} else if !slices.Equal(bounds, h.Bounds) {
			return Histogram{}, fmt.Errorf("%s: series with buckets %v and %v", name, h.Bounds, bounds)
		}
		for j, c := range cum {
			h.Cumulative[j] += c
		}
		h.Count += float64(m.GetHistogram().GetSampleCount())
	}
	return h, nil
}

// Sub returns h less before, an earlier scrape of the same histogram: the
// observations in between. A before with no observations and no buckets
// (the histogram did not exist yet) is zero. It returns an error if the
// buckets differ.
func (h Histogram) Sub(before Histogram) (Histogram, error) {
	if len(before.Bounds) == 0 && before.Count == 0 {
		return h, nil
	}
	if !slices.Equal(h.Bounds, before.Bounds) {
		return Histogram{}, fmt.Errorf("buckets %v, earlier %v", h.Bounds, before.Bounds)
	}
	out := Histogram{Bounds: h.Bounds, Cumulative: make([]float64, len(h.Bounds)), Count: h.Count - before.Count}
	for i := range h.Cumulative {
		out.Cumulative[i] = h.Cumulative[i] - before.Cumulative[i]
	}
	return out, nil
}

// Quantile returns the q-quantile (0 < q < 1) of the observations as
// Prometheus' histogram_quantile estimates it, in the unit of the bounds:
// linear interpolation within the bucket that holds it, from 0 for the first
// bucket; the largest finite bound when it lies above every bound. It
// returns NaN for a histogram without observations. The estimate is only as
// fine as the buckets: the true quantile lies within the same bucket.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 || q <= 0 || q >= 1 {
		return math.NaN()
	}
	rank := q * h.Count
	lower, below := 0.0, 0.0
	for i, b := range h.Bounds {
		if h.Cumulative[i] >= rank {
			in := h.Cumulative[i] - below
			return lower + (b-lower)*(rank-below)/in
		}
		lower, below = b, h.Cumulative[i]
	}
	if len(h.Bounds) == 0 {
		return math.NaN()
	}
	return h.Bounds[len(h.Bounds)-1]
}
