package measure

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/vcplugins/framework-plugins/plugins/catalog"
)

func TestParseStatCPU(t *testing.T) {
	// Fields 14 and 15 (utime 250, stime 130 ticks) of a real line, with a
	// command name holding a space and a parenthesis.
	const stat = "4242 (vc-controller) x) S 1 4242 4242 0 -1 4194560 12000 0 0 0 250 130 0 0 20 0 12 0 555 1234567 8910 18446744073709551615"
	got, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3800 * time.Millisecond; got != want {
		t.Errorf("parseStatCPU = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "4242 (x) S 1 2", "4242 (x) S 1 4242 4242 0 -1 4194560 12000 0 0 0 a 130 0"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("parseStatCPU(%q): no error", bad)
		}
	}
}

func TestProcessCPUAndPeakRSSOfThisProcess(t *testing.T) {
	cpu, err := ProcessesCPU([]int{os.Getpid(), os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if cpu < 0 {
		t.Errorf("ProcessesCPU = %v", cpu)
	}
	rss, err := PeakRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < 1<<20 {
		t.Errorf("PeakRSS = %d bytes, want at least 1 MiB for a Go test binary", rss)
	}
	if _, err := ProcStatusBytes(os.Getpid(), "NoSuchField:"); err == nil {
		t.Error("ProcStatusBytes of a missing field: no error")
	}
}

func TestRoundOrder(t *testing.T) {
	impls := []string{ImplStock, ImplOurs, ImplOursInline}
	for _, c := range []struct {
		round int
		want  []string
	}{
		{1, []string{ImplStock, ImplOurs, ImplOursInline}},
		{2, []string{ImplOursInline, ImplOurs, ImplStock}},
		{3, []string{ImplStock, ImplOurs, ImplOursInline}},
	} {
		if diff := cmp.Diff(c.want, RoundOrder(impls, c.round)); diff != "" {
			t.Errorf("round %d (-want +got):\n%s", c.round, diff)
		}
	}
	if diff := cmp.Diff([]string{ImplStock, ImplOurs, ImplOursInline}, impls); diff != "" {
		t.Errorf("RoundOrder changed its argument (-want +got):\n%s", diff)
	}
}

func TestReadRoundsRenumbersRounds(t *testing.T) {
	type m struct {
		Impl  string `json:"impl"`
		Round int    `json:"round"`
	}
	dir := t.TempDir()
	a, b := dir+"/a.json", dir+"/b.json"
	if err := WriteJSON(a, []m{{ImplOurs, 1}, {ImplOurs, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(b, []m{{ImplStock, 1}}); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadRounds([]string{a, b}, func(x *m) *int { return &x.Round })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]m{{ImplOurs, 1}, {ImplOurs, 2}, {ImplStock, 3}}, ms); diff != "" {
		t.Errorf("measurements (-want +got):\n%s", diff)
	}
	if _, err := ReadRounds([]string{dir + "/missing.json"}, func(x *m) *int { return &x.Round }); err == nil {
		t.Error("missing file: no error")
	}
	if err := os.WriteFile(a, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRounds([]string{a}, func(x *m) *int { return &x.Round }); err == nil {
		t.Error("bad JSON: no error")
	}
}

// The measured jobs' plugins: the in-tree flags for the frameworks stock
// has, none for the others, and every Volcano plugin the framework needs.
func TestPlugins(t *testing.T) {
	for _, c := range []struct {
		fw     string
		inline bool
		want   map[string][]string
	}{
		{"tensorflow", false, map[string][]string{"tensorflow": {"--ps=ps", "--worker=worker", "--port=2222"}, "svc": {}}},
		{"tensorflow", true, map[string][]string{"tensorflow": {"--ps=ps", "--worker=worker", "--port=2222", "--tf-config=inline"}, "svc": {}}},
		{"mpi", false, map[string][]string{"mpi": {"--master=master", "--worker=worker", "--port=22"}, "ssh": {}, "svc": {}}},
		{"pytorch", true, map[string][]string{"pytorch": {"--master=master", "--worker=worker", "--port=23456"}, "svc": {}}},
		{"dask", true, map[string][]string{"dask": {}, "svc": {}}},
	} {
		got, err := Plugins(c.fw, c.inline)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Plugins(%s, inline %v) (-want +got):\n%s", c.fw, c.inline, diff)
		}
	}
	for _, fw := range catalog.Names() {
		got, err := Plugins(fw, false)
		if err != nil {
			t.Fatal(err)
		}
		for name, args := range got {
			// JSON null is not a list of arguments to Volcano's CRD.
			if args == nil {
				t.Errorf("Plugins(%s)[%s] is nil", fw, name)
			}
		}
	}
	if _, err := Plugins("caffe", false); err == nil {
		t.Error("Plugins(caffe): no error")
	}
	if _, err := Job("x", "caffe", nil, false); err == nil {
		t.Error("Job(caffe): no error")
	}
}

func TestJob(t *testing.T) {
	job, err := Job("sweep-mpi-0", "mpi", []TaskReplicas{{"master", 1}, {"worker", 2}}, false)
	if err != nil {
		t.Fatal(err)
	}
	type task struct {
		Name      string
		Replicas  int32
		Container string
		Result    string
	}
	var got []task
	for _, tk := range job.Spec.Tasks {
		got = append(got, task{tk.Name, tk.Replicas, tk.Template.Spec.Containers[0].Name, tk.Template.Annotations["localcluster.vcplugins.io/result"]})
	}
	if diff := cmp.Diff([]task{{"master", 1, "mpi", "Running"}, {"worker", 2, "mpi", "Running"}}, got); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	if job.Spec.MinAvailable != 3 || job.Namespace != "default" || job.Spec.SchedulerName != "volcano" || job.Spec.Queue != "default" {
		t.Errorf("minAvailable %d, namespace %q, scheduler %q, queue %q; want 3, default, volcano, default",
			job.Spec.MinAvailable, job.Namespace, job.Spec.SchedulerName, job.Spec.Queue)
	}
}

// A histogram of two series, scraped twice: merged over the series, the
// difference of the scrapes, and histogram_quantile's estimates of it.
func TestHistogramQuantile(t *testing.T) {
	const name = "framework_plugins_admission_duration_seconds"
	parse := func(text string) map[string]*dto.MetricFamily {
		t.Helper()
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return fams
	}
	series := func(path string, b1, b2, b3, inf int) string {
		r := strings.NewReplacer("PATH", path)
		return r.Replace(strings.Join([]string{
			`NAME_bucket{path="PATH",result="allowed",le="0.001"} ` + strconv.Itoa(b1),
			`NAME_bucket{path="PATH",result="allowed",le="0.01"} ` + strconv.Itoa(b2),
			`NAME_bucket{path="PATH",result="allowed",le="0.1"} ` + strconv.Itoa(b3),
			`NAME_bucket{path="PATH",result="allowed",le="+Inf"} ` + strconv.Itoa(inf),
			`NAME_sum{path="PATH",result="allowed"} 1`,
			`NAME_count{path="PATH",result="allowed"} ` + strconv.Itoa(inf),
		}, "\n"))
	}
	text := func(a, b string) string {
		return strings.ReplaceAll("# TYPE NAME histogram\n"+a+"\n"+b+"\n", "NAME", name)
	}
	before := parse(text(series("/mutate", 10, 10, 10, 10), series("/validate", 0, 0, 0, 0)))
	// In between: /mutate 90 more, 50 ≤ 1 ms and 40 in (1, 10] ms;
	// /validate 10, in (10, 100] ms.
	after := parse(text(series("/mutate", 60, 100, 100, 100), series("/validate", 0, 0, 10, 10)))
	h0, err := MergedHistogram(before, name)
	if err != nil {
		t.Fatal(err)
	}
	h1, err := MergedHistogram(after, name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := h1.Sub(h0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Histogram{Bounds: []float64{0.001, 0.01, 0.1}, Cumulative: []float64{50, 90, 100}, Count: 100}, d); diff != "" {
		t.Errorf("difference (-want +got):\n%s", diff)
	}
	for _, c := range []struct{ q, want float64 }{
		// Rank 50 is the last of the first bucket: its upper bound.
		{0.5, 0.001},
		// Rank 70: 20 of the 40 in (1, 10] ms.
		{0.7, 0.001 + 0.009*20/40},
		// Rank 99: 9 of the 10 in (10, 100] ms.
		{0.99, 0.01 + 0.09*9/10},
	} {
		if got := d.Quantile(c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	// Over every finite bound: the largest bound.
	over := Histogram{Bounds: []float64{0.001, 0.01}, Cumulative: []float64{0, 0}, Count: 5}
	if got := over.Quantile(0.99); got != 0.01 {
		t.Errorf("Quantile over the last bound = %v, want 0.01", got)
	}
	if got := (Histogram{}).Quantile(0.5); !math.IsNaN(got) {
		t.Errorf("Quantile of nothing = %v, want NaN", got)
	}
	// Not yet scraped: the difference is the histogram itself.
	if got, err := h1.Sub(Histogram{}); err != nil || got.Count != 110 {
		t.Errorf("Sub(zero) = %+v, %v; want the histogram", got, err)
	}
	if h, err := MergedHistogram(before, "missing"); err != nil || h.Count != 0 {
		t.Errorf("missing family: %+v, %v", h, err)
	}
	if _, err := (Histogram{Bounds: []float64{1}, Cumulative: []float64{1}, Count: 1}).Sub(h0); err == nil {
		t.Error("Sub of other buckets: no error")
	}
	counter := parse("# TYPE c_total counter\nc_total 3\n")
	if _, err := MergedHistogram(counter, "c_total"); err == nil {
		t.Error("a counter as a histogram: no error")
	}
}

func TestPodTally(t *testing.T) {
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	tally := NewPodTally()
	type seen struct {
		pod              string
		created, bound   bool
		nCreated, nBound int
	}
	for i, c := range []struct {
		ev   watch.Event
		want seen
	}{
		{watch.Event{Type: watch.Added, Object: pod("a", "")}, seen{"a", true, false, 1, 0}},
		{watch.Event{Type: watch.Modified, Object: pod("a", "n1")}, seen{"a", false, true, 1, 1}},
		{watch.Event{Type: watch.Modified, Object: pod("a", "n1")}, seen{"a", false, false, 1, 1}},
		{watch.Event{Type: watch.Added, Object: pod("b", "n1")}, seen{"b", true, true, 2, 2}},
		{watch.Event{Type: watch.Deleted, Object: pod("b", "n1")}, seen{"", false, false, 2, 2}},
		{watch.Event{Type: watch.Error, Object: &metav1.Status{}}, seen{"", false, false, 2, 2}},
	} {
		p, created, bound := tally.Observe(c.ev)
		got := seen{"", created, bound, tally.Created(), tally.Bound()}
		if p != nil {
			got.pod = p.Name
		}
		if got != c.want {
			t.Errorf("event %d (%s): got %+v, want %+v", i, c.ev.Type, got, c.want)
		}
	}
}

// Stock has the frameworks with a framework.Stock: Volcano's in-tree
// tensorflow, pytorch and mpi plugins, in the catalog's order.
func TestStockFrameworks(t *testing.T) {
	if diff := cmp.Diff([]string{"tensorflow", "pytorch", "mpi"}, StockFrameworks()); diff != "" {
		t.Errorf("StockFrameworks() (-want +got):\n%s", diff)
	}
	if StockHas("dask") || !StockHas("mpi") || StockHas("no-such-framework") {
		t.Errorf("StockHas: dask %v, mpi %v, no-such-framework %v; want false, true, false", StockHas("dask"), StockHas("mpi"), StockHas("no-such-framework"))
	}
}

// WithStockWait gives a pytorch job's plugin --wait-master-enabled without
// touching the caller's argument slice, and leaves any other job alone.
func TestWithStockWait(t *testing.T) {
	for _, c := range []struct {
		fw       string
		wantOK   bool
		wantArgs []string
	}{
		{"pytorch", true, []string{"--master=master", "--worker=worker", "--port=23456", "--wait-master-enabled"}},
		{"tensorflow", false, []string{"--ps=ps", "--worker=worker", "--port=2222"}},
		{"mpi", false, []string{"--master=master", "--worker=worker", "--port=22"}},
	} {
		job, err := Job("j", c.fw, []TaskReplicas{{"master", 1}}, false)
		if err != nil {
			t.Fatal(err)
		}
		before := job.Spec.Plugins[c.fw]
		beforeCopy := append([]string(nil), before...)
		if ok := WithStockWait(job); ok != c.wantOK {
			t.Errorf("%s: WithStockWait = %v, want %v", c.fw, ok, c.wantOK)
		}
		if diff := cmp.Diff(c.wantArgs, job.Spec.Plugins[c.fw]); diff != "" {
			t.Errorf("%s: arguments (-want +got):\n%s", c.fw, diff)
		}
		if diff := cmp.Diff(beforeCopy, before); diff != "" {
			t.Errorf("%s: the old argument slice changed (-want +got):\n%s", c.fw, diff)
		}
	}
	if !IsStock(ImplStockWait) || !IsStock(ImplStock) || IsStock(ImplOurs) || IsStock(ImplOursNoWait) {
		t.Error("IsStock: want stock and stock-wait only")
	}
}
