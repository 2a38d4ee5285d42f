package mpi

import (
	"flag"
	"io"
	"strconv"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/framework"
)

// DefaultSSHPort is the port Volcano's ssh plugin writes into the pods' ssh
// config without --ssh-port, and in place of a value outside 1-65535.
const DefaultSSHPort = 22

// SSHPort is the --ssh-port of a Job's ssh plugin (Volcano v1.15+), which
// writes "Port <n>" under every host of the ssh config it generates.
type SSHPort struct {
	// Port is the port the ssh config gets: the value, or DefaultSSHPort
	// when the value is outside 1-65535.
	Port int
	// Value is the value as written ("2222", "0x8ae", "0").
	Value string
}

// Flag returns the flag as the Job wrote it, for messages: "--ssh-port=2222".
func (p SSHPort) Flag() string { return "--ssh-port=" + p.Value }

// SSHPluginPort returns the --ssh-port the Job gives Volcano's ssh plugin, read
// as that plugin reads its arguments (Go's flag package: "--ssh-port=N",
// "-ssh-port=N" or "--ssh-port", "N"; base prefixes accepted; parsing stops
// at the first argument it cannot read, and later ones are ignored), and
// false when the Job has no ssh plugin or its arguments set no port.
//
// The launcher cannot leave the port to that config: its entries match the
// short host names ("Host <hostname>"), while the hostfile names hosts
// <hostname>.<subdomain>.<namespace>.svc.<cluster domain>, so ssh would use port 22 for them; the plugin
// passes the port to ssh as -p instead (see ParseArgs).
func SSHPluginPort(job *batch.Job) (SSHPort, bool) {
	argv, ok := job.Spec.Plugins[framework.SSHPlugin]
	if !ok {
		return SSHPort{}, false
	}
	fs := flag.NewFlagSet(framework.SSHPlugin, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ignored string
	// The ssh plugin's other flags (v1.10-v1.15), so that parsing goes past them.
	for _, name := range []string{"ssh-key-file-path", "ssh-private-key", "ssh-public-key"} {
		fs.StringVar(&ignored, name, "", "")
	}
	v := &sshPortValue{}
	fs.Var(v, "ssh-port", "")
	_ = fs.Parse(argv) // what was read before an error counts, as in Volcano
	if !v.set {
		return SSHPort{}, false
	}
	p := SSHPort{Port: v.port, Value: v.raw}
	if p.Port < 1 || p.Port > 65535 {
		p.Port = DefaultSSHPort
	}
	return p, true
}

// sshPortValue is an int flag (as flag.IntVar parses it) that keeps its text.
type sshPortValue struct {
	port int
	raw  string
	set  bool
}

func (v *sshPortValue) String() string { return v.raw }

func (v *sshPortValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return err
	}
	v.port, v.raw, v.set = int(n), s, true
	return nil
}
