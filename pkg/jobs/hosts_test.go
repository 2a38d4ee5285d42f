package jobs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// Every host is <hostname>.<subdomain>.<namespace>.svc.<cluster domain>, in
// the process-wide domain or a Domain's, so that it cannot fall through the
// DNS search path to Service <hostname> in namespace <subdomain>.
func TestDomainHosts(t *testing.T) {
	defer func() { _ = SetClusterDomain("") }()
	job := &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: "tf", Namespace: "ml"}}
	plain := &batch.TaskSpec{Name: "worker", Replicas: 2}
	named := &batch.TaskSpec{Name: "ps", Replicas: 3, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Hostname: "params", Subdomain: "net"}}}
	subdomain := &batch.TaskSpec{Name: "chief", Replicas: 1, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Subdomain: "net"}}}
	cases := map[string]struct {
		process string // SetClusterDomain's argument
		domain  Domain
		task    *batch.TaskSpec
		port    int
		want    []string
		// wantDistinct is DistinctHosts' answer when it differs from want.
		wantDistinct []string
	}{
		"default":             {task: plain, want: []string{"tf-worker-0.tf.ml.svc.cluster.local", "tf-worker-1.tf.ml.svc.cluster.local"}},
		"port":                {task: plain, port: 2222, want: []string{"tf-worker-0.tf.ml.svc.cluster.local:2222", "tf-worker-1.tf.ml.svc.cluster.local:2222"}},
		"template subdomain":  {task: subdomain, want: []string{"tf-chief-0.net.ml.svc.cluster.local"}},
		"template hostname":   {task: named, want: []string{"params.net.ml.svc.cluster.local", "params.net.ml.svc.cluster.local", "params.net.ml.svc.cluster.local"}, wantDistinct: []string{"params.net.ml.svc.cluster.local"}},
		"process domain":      {process: "corp.example", task: plain, want: []string{"tf-worker-0.tf.ml.svc.corp.example", "tf-worker-1.tf.ml.svc.corp.example"}},
		"Domain over process": {process: "corp.example", domain: "k8s.internal", task: plain, port: 22, want: []string{"tf-worker-0.tf.ml.svc.k8s.internal:22", "tf-worker-1.tf.ml.svc.k8s.internal:22"}},
		"no replicas":         {task: &batch.TaskSpec{Name: "idle"}, want: []string{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := SetClusterDomain(tc.process); err != nil {
				t.Fatal(err)
			}
			got := tc.domain.Hosts(job, tc.task, tc.port)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Hosts (-want +got):\n%s", diff)
			}
			if tc.domain == "" {
				if diff := cmp.Diff(tc.want, Hosts(job, tc.task, tc.port)); diff != "" {
					t.Errorf("jobs.Hosts (-want +got):\n%s", diff)
				}
			}
			if n := tc.domain.HostsLen(job, tc.task, tc.port); n != len(strings.Join(got, "")) {
				t.Errorf("HostsLen = %d, want the sum of the hosts' lengths, %d", n, len(strings.Join(got, "")))
			}
			if tc.port > 0 {
				return
			}
			distinct := tc.want
			if tc.wantDistinct != nil {
				distinct = tc.wantDistinct
			}
			if diff := cmp.Diff(distinct, tc.domain.DistinctHosts(job, tc.task)); diff != "" {
				t.Errorf("DistinctHosts (-want +got):\n%s", diff)
			}
			if n := tc.domain.DistinctHostsLen(job, tc.task); n != len(strings.Join(distinct, "")) {
				t.Errorf("DistinctHostsLen = %d, want %d", n, len(strings.Join(distinct, "")))
			}
		})
	}
}

// With the longest names (a DNS label each) and the longest cluster domain
// the host is still a DNS name; one more character of domain is refused, as
// is anything that is not a DNS name.
func TestClusterDomainBound(t *testing.T) {
	defer func() { _ = SetClusterDomain("") }()
	label := func(c string) string { return strings.Repeat(c, validation.DNS1123LabelMaxLength) }
	longest := strings.TrimSuffix(strings.Repeat("d.", MaxClusterDomainLength/2+1), ".")[:MaxClusterDomainLength]
	if MaxClusterDomainLength != 57 {
		t.Errorf("MaxClusterDomainLength = %d, want 253 - 3*63 - len(\"...svc.\") = 57", MaxClusterDomainLength)
	}
	job := &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: label("j"), Namespace: label("n")}}
	task := &batch.TaskSpec{Name: "w", Replicas: 1, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Hostname: label("h")}}}
	host := Domain(longest).Host(job, task, 0)
	if len(host) != validation.DNS1123SubdomainMaxLength {
		t.Errorf("longest host is %d characters, want %d", len(host), validation.DNS1123SubdomainMaxLength)
	}
	if msgs := validation.IsDNS1123Subdomain(host); len(msgs) > 0 {
		t.Errorf("longest host %q is not a DNS name: %v", host, msgs)
	}

	cases := map[string]struct {
		domain  string
		wantErr bool
	}{
		"default":                       {domain: DefaultClusterDomain},
		"longest":                       {domain: longest},
		"one label":                     {domain: "corp"},
		"too long":                      {domain: longest + "x", wantErr: true},
		"trailing dot":                  {domain: "cluster.local.", wantErr: true},
		"upper case":                    {domain: "Cluster.local", wantErr: true},
		"space":                         {domain: "cluster local", wantErr: true},
		"leading hyphen":                {domain: "-cluster.local", wantErr: true},
		"empty is refused by the check": {domain: "", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := CheckClusterDomain(tc.domain); (err != nil) != tc.wantErr {
				t.Errorf("CheckClusterDomain(%q) = %v, want error %v", tc.domain, err, tc.wantErr)
			}
			if tc.domain == "" {
				return // SetClusterDomain("") restores the default
			}
			_ = SetClusterDomain("")
			err := SetClusterDomain(tc.domain)
			want := tc.domain
			if tc.wantErr {
				want = DefaultClusterDomain // refused: unchanged
			}
			if (err != nil) != tc.wantErr || ClusterDomain() != want {
				t.Errorf("SetClusterDomain(%q) = %v, then ClusterDomain() = %q; want error %v, %q", tc.domain, err, ClusterDomain(), tc.wantErr, want)
			}
		})
	}
}
