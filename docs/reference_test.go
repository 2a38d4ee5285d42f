package docs_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"
	stockmpi "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/mpi"
	stockpytorch "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/pytorch"
	stocktensorflow "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/tensorflow"

	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/plugins"
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
	const file = "reference.md"
	const start, end = "<!-- generated: plugin-arguments -->\n", "<!-- end: plugin-arguments -->\n"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, start), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q block", file, strings.TrimSpace(start), strings.TrimSpace(end))
	}
	got, want := doc[i+len(start):j], "\n"+argumentsReference(t)
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(doc[:i+len(start)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's plugin arguments differ from the parsers; go test ./docs -update -run TestArgumentsReference rewrites them:\n%s", file, want)
}
