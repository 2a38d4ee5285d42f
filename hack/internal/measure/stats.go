package measure

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// KiB formats a byte count in KiB.
func KiB(b int64) string { return fmt.Sprintf("%.0fKiB", float64(b)/(1<<10)) }

// MiB formats a byte count in MiB.
func MiB(b int64) string { return fmt.Sprintf("%.0fMiB", float64(b)/(1<<20)) }

// RoundOrder returns the order in which round (1, 2, ...) runs the
// implementations: impls in odd rounds, reversed in even ones, so a drift of
// the machine's speed during a test does not always favour the same one.
func RoundOrder(impls []string, round int) []string {
	if round%2 == 1 {
		return impls
	}
	out := make([]string, len(impls))
	for i, v := range impls {
		out[len(impls)-1-i] = v
	}
	return out
}

// WriteJSON writes v to file as indented JSON with a final newline.
func WriteJSON(file string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

// ReadRounds reads files of JSON arrays of measurements, as WriteJSON wrote
// them, and renumbers the rounds (the field round returns, 1, 2, ...) of each
// file after those of the files before it, so that the medians are taken over
// the rounds of all files. It returns an error if a file cannot be read or
// parsed.
func ReadRounds[T any](files []string, round func(*T) *int) ([]T, error) {
	var all []T
	rounds := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var ms []T
		if err := json.Unmarshal(data, &ms); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		last := 0
		for i := range ms {
			r := round(&ms[i])
			last = max(last, *r)
			*r += rounds
		}
		rounds += last
		all = append(all, ms...)
	}
	return all, nil
}

// Tool is what a measuring command (make scale, make sweep) runs after its
// flags: Name prefixes its messages and its files (<Name>.txt, <Name>.json).
type Tool[M any] struct {
	Name string
	// In lists measurement files to check instead of running, separated by
	// commas (the -in flag); "" runs.
	In string
	// Out is the directory of the files written.
	Out string
	// Round is where a measurement keeps its round (ReadRounds).
	Round func(*M) *int
	// Run measures; Report prints the tables and returns the failed targets.
	Run    func(context.Context) ([]M, error)
	Report func(io.Writer, []M) []string
}

// Main reads the measurements (In) or takes them (Run, interruptible by
// SIGINT and SIGTERM; written to <Out>/<Name>.json), prints the report,
// writes it to <Out>/<Name>.txt when it ran, and returns the exit status:
// 0 every target holds, 1 a target failed (named on stdout), 2 the
// measurements could not be taken or read, 130 interrupted.
func (t Tool[M]) Main() int {
	var ms []M
	if t.In != "" {
		var err error
		if ms, err = ReadRounds(strings.Split(t.In, ","), t.Round); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", t.Name, err)
			return 2
		}
	} else {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		var err error
		ms, err = t.Run(ctx)
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "%s: interrupted\n", t.Name)
			return 130
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", t.Name, err)
			return 2
		}
		if err := WriteJSON(filepath.Join(t.Out, t.Name+".json"), ms); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", t.Name, err)
			return 2
		}
	}
	var buf strings.Builder
	failed := t.Report(io.MultiWriter(os.Stdout, &buf), ms)
	if t.In == "" {
		file := filepath.Join(t.Out, t.Name+".txt")
		if err := os.WriteFile(file, []byte(buf.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", t.Name, err)
			return 2
		}
		fmt.Printf("\nwritten: %s, %s\n", file, filepath.Join(t.Out, t.Name+".json"))
	}
	if len(failed) > 0 {
		fmt.Printf("targets failed: %s\n", strings.Join(failed, "; "))
		return 1
	}
	return 0
}
