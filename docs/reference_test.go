package docs_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	stockmpi "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/mpi"
	stockpytorch "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/pytorch"
	stocktensorflow "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/tensorflow"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/helpflags"
	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/plugins"
	fwsamples "github.com/vcplugins/framework-plugins/plugins/catalog/samples"
)

// Volcano's in-tree plugins of the frameworks that have a Stock.
var stockBuilders = map[string]func(pluginsinterface.PluginClientset, []string) pluginsinterface.PluginInterface{
	"tensorflow": stocktensorflow.New,
	"pytorch":    stockpytorch.New,
	"mpi":        stockmpi.New,
}

// stockFlag is a flag of Volcano's in-tree plugin, as its usage prints it.
type stockFlag struct{ Kind, Default string }

var (
	usageFlag    = regexp.MustCompile(`^  -(\S+)(?: (\S+))?$`)
	usageDefault = regexp.MustCompile(`\(default (.*)\)$`)
)

// stockFlags returns the flags of Volcano's in-tree plugin name, read from
// the usage Go's flag package prints when the plugin is given -help (on
// standard error: the plugin sets no output of its own).
func stockFlags(t *testing.T, name string) map[string]stockFlag {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	stockBuilders[name](pluginsinterface.PluginClientset{}, []string{"-help"})
	os.Stderr = saved
	w.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]stockFlag{}
	var cur string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if m := usageFlag.FindStringSubmatch(line); m != nil {
			cur = m[1]
			kind := m[2]
			if kind == "" {
				kind = "bool"
			}
			flags[cur] = stockFlag{Kind: kind}
			continue
		}
		if cur != "" && strings.HasPrefix(line, "    \t") {
			if m := usageDefault.FindStringSubmatch(line); m != nil {
				f := flags[cur]
				f.Default = strings.Trim(m[1], `"`)
				flags[cur] = f
			}
		}
	}
	if len(flags) == 0 {
		t.Fatalf("Volcano's in-tree %s plugin printed no flags:\n%s", name, out)
	}
	return flags
}

// argumentsReference is the Markdown of every framework plugin's arguments,
// from each plugin's own parser (args.Record), with what Volcano's in-tree
// plugin of the same name does with each.
func argumentsReference(t *testing.T) string {
	var b strings.Builder
	for _, f := range plugins.ByName() {
		fmt.Fprintf(&b, "### %s\n\n", f.Name)
		recorded := args.Record(func() { f.Describe(nil, nil) })
		flags := recorded[f.Name]
		if len(flags) == 0 {
			t.Fatalf("%s: its parser defined no flags", f.Name)
		}
		var stock map[string]stockFlag
		if f.Stock != nil {
			stock = stockFlags(t, f.Name)
			b.WriteString("| Argument | Value | Default | Meaning | Volcano's in-tree plugin |\n|---|---|---|---|---|\n")
		} else {
			b.WriteString("| Argument | Value | Default | Meaning |\n|---|---|---|---|\n")
		}
		for _, fl := range flags {
			def := "`" + fl.Default + "`"
			if fl.Default == "" {
				def = "none"
			}
			fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |", fl.Name, fl.Kind, def, strings.ReplaceAll(fl.Usage, "|", `\|`))
			if stock != nil {
				s, ok := stock[fl.Name]
				if ok && s.Default == "" && s.Kind == "bool" {
					s.Default = "false" // Go's usage prints no zero default
				}
				switch {
				case !ok:
					b.WriteString(" unknown: its parsing stops here, and this argument and every later one keep their defaults |")
				case s.Default == fl.Default:
					b.WriteString(" the same default |")
				default:
					fmt.Fprintf(&b, " default `%s` |", s.Default)
				}
			}
			b.WriteString("\n")
		}
		if stock != nil {
			var only []string
			for n := range stock {
				found := false
				for _, fl := range flags {
					found = found || fl.Name == n
				}
				if !found {
					only = append(only, "`--"+n+"`")
				}
			}
			if len(only) > 0 {
				fmt.Fprintf(&b, "\nVolcano's in-tree plugin also has %s, which this plugin refuses.\n", strings.Join(only, ", "))
			}
		} else {
			fmt.Fprintf(&b, "\nVolcano has no in-tree %s plugin: its own admission refuses a Job that names one.\n", f.Name)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// docs/reference.md's plugin arguments are each plugin's parser's flags,
// with Volcano's in-tree plugins' own; go test ./docs -update rewrites
// them.
func TestArgumentsReference(t *testing.T) {
	checkGenerated(t, "reference.md", "plugin-arguments", func() string { return argumentsReference(t) })
}

// The managers of the reference: ours and the stock one of the same name,
// as packages.
var referenceManagers = []struct{ ours, stock, oursPkg, stockPkg string }{
	{"vc-controller-manager", "controller-manager", "../cmd/vc-controller-manager", "volcano.sh/volcano/cmd/controller-manager"},
	{"vc-webhook-manager", "webhook-manager", "../cmd/vc-webhook-manager", "volcano.sh/volcano/cmd/webhook-manager"},
}

// managerFlagsReference is the Markdown of every flag of our two managers,
// from their --help, with where each differs from Volcano's stock manager
// of the line (built from its module).
func managerFlagsReference(t *testing.T) string {
	dir := t.TempDir()
	var b strings.Builder
	for _, m := range referenceManagers {
		if out, err := helpflags.Build(dir, m.oursPkg, m.stockPkg); err != nil {
			t.Fatalf("building %s and Volcano's %s: %v\n%s", m.ours, m.stock, err, out)
		}
		ours, stock := helpflags.Of(filepath.Join(dir, m.ours)), helpflags.Of(filepath.Join(dir, m.stock))
		if len(ours) < 10 || len(stock) < 10 {
			t.Fatalf("--help of %s lists %d flags, of Volcano's %s %d", m.ours, len(ours), m.stock, len(stock))
		}
		names := make([]string, 0, len(ours))
		for n := range ours {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "### %s\n\n| Flag | Type | Default | Meaning |\n|---|---|---|---|\n", m.ours)
		for _, n := range names {
			o := ours[n]
			typ, def := o.Type, "`"+o.Default+"`"
			switch {
			case typ == "" && o.Default == "":
				typ, def = "bool", "`false`" // pflag prints no false default
			case typ == "":
				typ = "bool"
			case o.Default == "":
				def = "none"
			}
			meaning := o.Usage
			// The feature gates' usage lists every gate of the
			// Kubernetes libraries: --help has it.
			if i := strings.Index(meaning, " Options are:"); i >= 0 {
				meaning = meaning[:i] + " (`--help` lists them)"
			}
			switch s, ok := stock[n]; {
			case !ok:
				meaning = "**This project's.** " + meaning
			case s.Default != o.Default:
				def += fmt.Sprintf(" (Volcano's: `%s`)", s.Default)
			}
			meaning = strings.NewReplacer("|", `\|`, "\n", " ").Replace(meaning)
			fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", n, typ, def, meaning)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// docs/reference.md's manager flags are the managers' --help, against
// Volcano's stock ones; go test ./docs -update rewrites them.
func TestManagerFlagsReference(t *testing.T) {
	checkGenerated(t, "reference.md", "manager-flags", func() string { return managerFlagsReference(t) })
}

// checkGenerated compares the block between <!-- generated: key --> and
// <!-- end: key --> of file with generate's Markdown, rewriting it with
// -update.
func checkGenerated(t *testing.T, file, key string, generate func() string) {
	t.Helper()
	start, end := "<!-- generated: "+key+" -->\n", "<!-- end: "+key+" -->\n"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, start), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q block", file, strings.TrimSpace(start), strings.TrimSpace(end))
	}
	got, want := doc[i+len(start):j], "\n"+generate()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(doc[:i+len(start)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's %s block differs from the code; go test ./docs -update rewrites it:\n%s", file, key, want)
}

// A framework's Sample.StockFlags (the flags make startup lets a stock
// example give) are set exactly for the frameworks with a Stock, and each is
// a flag of Volcano's in-tree plugin of the name.
func TestSampleStockFlags(t *testing.T) {
	for _, f := range fwsamples.Frameworks() {
		known := f.Sample.StockFlags
		if (f.Stock != nil) != (len(known) > 0) {
			t.Errorf("%s: Stock %v, Sample.StockFlags %q: want both or neither", f.Name, f.Stock != nil, known)
			continue
		}
		if f.Stock == nil {
			continue
		}
		stock := stockFlags(t, f.Name)
		for _, name := range known {
			if _, ok := stock[name]; !ok {
				t.Errorf("%s: Sample.StockFlags has %q, which Volcano's in-tree plugin does not parse", f.Name, name)
			}
		}
	}
}
