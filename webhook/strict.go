package webhook

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

// StrictArgumentsKey is the key of the admission configuration file
// (Volcano's --admission-conf, filled by Volcano's chart from
// custom.admission_config_override) that turns strict mode on:
// "strictPluginArguments: true". Volcano's own reading of the file
// ignores keys it does not know.
const StrictArgumentsKey = "strictPluginArguments"

// maxAdmissionConfBytes is the most of the admission configuration file
// StrictArgumentsFrom reads: a ConfigMap holds at most 1 MiB.
const maxAdmissionConfBytes = 1 << 20

var strictArguments atomic.Pointer[func() bool]

// SetStrictArguments sets what decides strict mode: while strict returns
// true, the validating admission denies a Job whose only problems are in
// its framework plugins' arguments and roles, with the messages it would
// otherwise give as warnings; otherwise it admits such a Job as Volcano
// does (asStock). strict is called only for such Jobs. nil turns strict
// mode off (the default).
func SetStrictArguments(strict func() bool) {
	if strict == nil {
		strictArguments.Store(nil)
		return
	}
	strictArguments.Store(&strict)
}

func strict() bool {
	f := strictArguments.Load()
	return f != nil && (*f)()
}

// StrictArgumentsFrom returns the strict-mode decision of the webhook
// manager: always strict when flag is set (--strict-plugin-arguments),
// otherwise strict while the YAML file at path (none when path is empty)
// says StrictArgumentsKey: true. The file is read at each call, so a
// change of the ConfigMap applies without a restart; a file that cannot be
// read or parsed leaves strict mode off, logged.
func StrictArgumentsFrom(flag bool, path string) func() bool {
	return func() bool {
		if flag {
			return true
		}
		if path == "" {
			return false
		}
		on, err := strictInFile(path)
		if err != nil {
			klog.Warningf("strict plugin arguments: %v; strict mode is off", err)
		}
		return on
	}
}

// strictInFile reads StrictArgumentsKey from the YAML file at path.
func strictInFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxAdmissionConfBytes+1))
	if err != nil {
		return false, err
	}
	if len(raw) > maxAdmissionConfBytes {
		return false, fmt.Errorf("%s is over %d bytes", path, maxAdmissionConfBytes)
	}
	var conf struct {
		Strict bool `json:"strictPluginArguments"`
	}
	if err := yaml.Unmarshal(raw, &conf); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return conf.Strict, nil
}
