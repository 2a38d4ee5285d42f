package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// installDoc and its headings locate the blocks of commands the install
// test runs as the user would: docs/install.md's "Onto an existing Volcano"
// (with Helm) and "Install without Helm".
const (
	installDoc     = "docs/install.md"
	installHeading = "### Onto an existing Volcano"
	noHelmHeading  = "## Install without Helm"
)

// installDoc's blocks use the variables of its header (REGISTRY,
// VOLCANO_VERSION, VOLCANO_NAMESPACE); the test sets them in the
// environment of the commands it runs (t.env).
//
// What the test replaces in installDoc's blocks (regular expressions): the
// rollout waits get a timeout; with Helm, step 1 installs the packaged chart
// instead of the directory, step 2 takes Volcano's chart of the line from
// the module cache and adds to the user's values the real node's and the
// images pushed to the cluster's registry; without Helm, step 2 applies the
// patches with the pushed images written in (docPatchFile).
const (
	docRolloutStatus = `rollout status deployment volcano-admission$`
	docOurChart      = `^helm install framework-plugins installer/helm/framework-plugins `
	docVolcanoChart  = `volcano-sh/volcano --version (?:[0-9.]+|"\$VOLCANO_VERSION") `
	docVolcanoValues = `-f installer/helm/volcano-values.yaml `
)

// docSteps are the commands of the first ```sh block under a heading of a
// Markdown file, by step: a comment line "# N. ..." starts step N (commands
// before the first are step -1); a line ending in a backslash continues on
// the next; blank lines and other comments are skipped.
type docSteps map[int][]string

// readDocSteps reads the block under heading in file. It returns an error
// if the file cannot be read or has no such heading or block.
func readDocSteps(file, heading string) (docSteps, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	stepRe := regexp.MustCompile(`^# ([0-9]+)\.`)
	steps := docSteps{}
	step, inHeading, inBlock, found := -1, false, false, false
	var cmd strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !inHeading:
			inHeading = line == heading
			continue
		case !inBlock:
			if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "####") {
				return nil, fmt.Errorf("%s: no ```sh block under %q", file, heading)
			}
			inBlock = line == "```sh"
			continue
		case line == "```":
			found = true
		}
		if found {
			break
		}
		if m := stepRe.FindStringSubmatch(line); m != nil {
			step, _ = strconv.Atoi(m[1])
			continue
		}
		trimmed := strings.TrimSpace(line)
		if cmd.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if rest, ok := strings.CutSuffix(trimmed, `\`); ok {
			cmd.WriteString(strings.TrimSpace(rest) + " ")
			continue
		}
		cmd.WriteString(trimmed)
		steps[step] = append(steps[step], cmd.String())
		cmd.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: no complete ```sh block under %q", file, heading)
	}
	return steps, nil
}

// docPatchFile matches the patch argument of deployment's patch in the
// block without Helm: the line's patch file with the user's registry written
// in ("$(sed ... installer/volcano-patches/<deployment>.yaml)").
func docPatchFile(deployment string) string {
	return `--patch "\$\(sed [^)]*installer/volcano-patches/` + regexp.QuoteMeta(deployment) + `\.yaml\)"$`
}

// subst replaces what the regular expression old matches by new: what the
// test runs in place of the user's (its chart paths, registry, values).
type subst struct{ old, new string }

// commands returns step n's commands with every substitution applied. Each
// must match in exactly one command of the step, so that a changed doc
// fails the test instead of running something else than it shows.
func (d docSteps) commands(n int, substs ...subst) ([]string, error) {
	cmds := append([]string(nil), d[n]...)
	if len(cmds) == 0 {
		return nil, fmt.Errorf("no step %d", n)
	}
	for _, s := range substs {
		re := regexp.MustCompile(s.old)
		hits := 0
		for i, c := range cmds {
			if re.MatchString(c) {
				hits++
				cmds[i] = re.ReplaceAllLiteralString(c, s.new)
			}
		}
		if hits != 1 {
			return nil, fmt.Errorf("step %d: %d commands match %q, want 1 (update hack/installtest with the doc)", n, hits, s.old)
		}
	}
	return cmds, nil
}
