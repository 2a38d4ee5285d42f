package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
)

// volcanoEnv reports whether a variable comes from Volcano itself (its job
// controller and svc plugin: VK_TASK_INDEX, VC_TASK_INDEX, VC_<TASK>_HOSTS,
// VC_<TASK>_NUM) rather than from a framework plugin.
func volcanoEnv(name string) bool {
	return strings.HasPrefix(name, "VC_") || strings.HasPrefix(name, "VK_")
}

// report prints, for each pod of r, what differs from the job's template:
// the framework variables, ports and mounts the plugins added, and the wait
// init container; then the MPI hostfile.
func report(r *run) {
	job := r.example.job
	var plugins []string
	for _, name := range sortedKeys(job.Spec.Plugins) {
		if args := job.Spec.Plugins[name]; len(args) > 0 {
			name += " " + strings.Join(args, " ")
		}
		plugins = append(plugins, name)
	}
	fmt.Printf("\n%s · %s  (%s)\n", r.framework, job.Name, r.example.file)
	fmt.Printf("  plugins: %s\n", strings.Join(plugins, "; "))
	if len(r.pods) == 0 {
		fmt.Println("  no pods were created")
	}
	for _, p := range sortedPods(r) {
		state := string(p.Status.Phase)
		switch {
		case r.gone[p.Name]:
			state += ", then deleted"
		case p.DeletionTimestamp != nil:
			state += ", being deleted"
		}
		reportPod(p, templateOf(job, p), state, func(name string) (map[string]string, error) {
			data, ok := r.configMaps[name]
			if !ok {
				return nil, fmt.Errorf("ConfigMap %s was not seen while the job ran", name)
			}
			return data, nil
		})
	}
	if r.hostfileCM != "" {
		fmt.Printf("\n  ConfigMap %s, key %s (the master mounts it at %s):\n", r.hostfileCM, mpi.HostfileKey, mpi.HostfilePath)
		if h, ok := r.hostfile(); !ok {
			fmt.Println("    (not found)")
		} else {
			for _, line := range strings.Split(strings.TrimRight(h, "\n"), "\n") {
				fmt.Println("    " + line)
			}
		}
	}
	reportLog(r)
}

// logLines is how much of its longest log a real run shows; failedLogLines
// how much of a failed pod's log a failed run shows, enough for the
// framework's own warnings before a Python traceback.
const (
	logLines       = 14
	failedLogLines = 60
)

// reportLog prints the end of the program log logToShow picks.
func reportLog(r *run) {
	if r.podLogs == nil {
		return
	}
	pod, lines, what := logToShow(r)
	if pod == "" {
		fmt.Println("\n  no pod printed anything")
		return
	}
	fmt.Printf("\n  %s of %s/%s:\n", what, pod, r.real.Container)
	for _, line := range lines {
		fmt.Println("    " + line)
	}
}

// logToShow picks the log a real run's report shows and returns its pod, its
// last lines and what they are ("log" or "last N lines of the log"); pod is
// "" when no pod printed anything. It is the longest log: the pod that prints
// the results (rank 0, the chief, the scheduler, the launcher) prints the
// most. Of a run that failed it is the first failed pod's, if that pod
// printed anything, and more of it.
func logToShow(r *run) (pod string, lines []string, what string) {
	var log string
	pods := sortedPods(r)
	for _, p := range pods {
		if l := r.podLogs[p.Name]; len(l) > len(log) {
			pod, log = p.Name, l
		}
	}
	limit := logLines
	if !r.ok {
		for _, p := range pods {
			if l := r.podLogs[p.Name]; p.Status.Phase == corev1.PodFailed && l != "" {
				pod, log, limit = p.Name, l, failedLogLines
				break
			}
		}
	}
	if pod == "" {
		return "", nil, ""
	}
	lines = strings.Split(strings.TrimRight(log, "\n"), "\n")
	what = "log"
	if len(lines) > limit {
		lines = lines[len(lines)-limit:]
		what = fmt.Sprintf("last %d lines of the log", limit)
	}
	return pod, lines, what
}

// reportPod prints what the plugins added to pod p beyond its template tmpl;
// configMap returns the data of a ConfigMap the pod mounts, as last seen.
func reportPod(p *corev1.Pod, tmpl *corev1.PodSpec, state string, configMap func(name string) (map[string]string, error)) {
	node := p.Spec.NodeName
	if node == "" {
		node = "not bound"
	}
	fmt.Printf("\n  %s  (task %s, %s, %s)\n", p.Name, p.Annotations[batch.TaskSpecKey], node, state)
	tmplContainers := map[string]*corev1.Container{}
	if tmpl != nil {
		for i := range tmpl.Containers {
			tmplContainers[tmpl.Containers[i].Name] = &tmpl.Containers[i]
		}
	}
	for _, c := range p.Spec.Containers {
		tc := tmplContainers[c.Name]
		if len(p.Spec.Containers) > 1 {
			fmt.Printf("    container %s:\n", c.Name)
		}
		added := addedEnv(c, tc)
		var fw, vc []string
		width := 0
		for _, e := range added {
			if volcanoEnv(e.Name) {
				vc = append(vc, e.Name)
			} else if len(e.Name) > width {
				width = len(e.Name)
			}
		}
		for _, e := range added {
			if !volcanoEnv(e.Name) {
				fw = append(fw, fmt.Sprintf("    %-*s  %s", width, e.Name, envValue(e)))
			}
		}
		if len(fw) == 0 {
			fmt.Println("    (no framework variables for this role)")
		}
		for _, l := range fw {
			fmt.Println(l)
		}
		if ports := addedPorts(c, tc); len(ports) > 0 {
			fmt.Printf("    + ports   %s\n", strings.Join(ports, ", "))
		}
		if mounts := addedMounts(c, tc, p.Spec.Volumes); len(mounts) > 0 {
			fmt.Printf("    + mounts  %s\n", strings.Join(mounts, ", "))
		}
		if len(vc) > 0 {
			fmt.Printf("    (also from Volcano: %s)\n", strings.Join(vc, " "))
		}
	}
	waited := false
	for _, ic := range p.Spec.InitContainers {
		if ic.Name != wait.ContainerName {
			continue
		}
		waited = true
		env := map[string]string{}
		for _, e := range ic.Env {
			env[e.Name] = e.Value
		}
		timeout := "no timeout"
		if s, err := strconv.Atoi(env[wait.TimeoutEnv]); err == nil && s > 0 {
			timeout = fmt.Sprintf("timeout %ds", s)
		}
		from := ""
		if file := env[wait.TargetsFileEnv]; file != "" {
			from = " (the targets in " + file + ")"
		}
		fmt.Printf("    init container %s (%s, %s) waits for%s:\n", ic.Name, ic.Image, timeout, from)
		targets, err := wait.PodTargets(p, &ic, configMap)
		if err != nil {
			fmt.Printf("      (%v)\n", err)
		} else if len(targets) == 0 {
			fmt.Println("      (nothing)")
		}
		for _, t := range targets {
			what := "TCP connect"
			if !strings.Contains(t, ":") || strings.HasSuffix(t, "]") {
				what = "DNS lookup"
			}
			fmt.Printf("      %-40s %s\n", t, what)
		}
	}
	if !waited {
		fmt.Println("    no wait container: it depends on no other role")
	}
}

func envValue(e corev1.EnvVar) string {
	if e.ValueFrom == nil {
		if e.Value == "" {
			return `""`
		}
		return e.Value
	}
	switch vf := e.ValueFrom; {
	case vf.FieldRef != nil:
		return "(from field " + vf.FieldRef.FieldPath + ")"
	case vf.ConfigMapKeyRef != nil:
		return "(from ConfigMap " + vf.ConfigMapKeyRef.Name + " key " + vf.ConfigMapKeyRef.Key + ")"
	case vf.SecretKeyRef != nil:
		return "(from Secret " + vf.SecretKeyRef.Name + " key " + vf.SecretKeyRef.Key + ")"
	case vf.ResourceFieldRef != nil:
		return "(from resource " + vf.ResourceFieldRef.Resource + ")"
	}
	return "(valueFrom)"
}

// addedEnv returns the variables of c that its template tc does not set.
func addedEnv(c corev1.Container, tc *corev1.Container) []corev1.EnvVar {
	have := map[string]bool{}
	if tc != nil {
		for _, e := range tc.Env {
			have[e.Name] = true
		}
	}
	var out []corev1.EnvVar
	for _, e := range c.Env {
		if !have[e.Name] {
			out = append(out, e)
		}
	}
	return out
}

func addedPorts(c corev1.Container, tc *corev1.Container) []string {
	have := map[int32]bool{}
	if tc != nil {
		for _, p := range tc.Ports {
			have[p.ContainerPort] = true
		}
	}
	var out []string
	for _, p := range c.Ports {
		if !have[p.ContainerPort] {
			s := fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol)
			if p.Name != "" {
				s = p.Name + " " + s
			}
			out = append(out, s)
		}
	}
	return out
}

// addedMounts lists the mounts of c its template lacks, with their sources.
// The service account token every pod gets is left out.
func addedMounts(c corev1.Container, tc *corev1.Container, volumes []corev1.Volume) []string {
	have := map[string]bool{}
	if tc != nil {
		for _, m := range tc.VolumeMounts {
			have[m.MountPath] = true
		}
	}
	source := map[string]string{}
	for _, v := range volumes {
		switch {
		case v.ConfigMap != nil:
			source[v.Name] = "ConfigMap " + v.ConfigMap.Name
		case v.Secret != nil:
			source[v.Name] = "Secret " + v.Secret.SecretName
		case v.Projected != nil:
			source[v.Name] = "projected"
		default:
			source[v.Name] = "volume " + v.Name
		}
	}
	var out []string
	for _, m := range c.VolumeMounts {
		if have[m.MountPath] || strings.HasPrefix(m.MountPath, "/var/run/secrets/kubernetes.io/") {
			continue
		}
		s := m.MountPath
		if m.SubPath != "" {
			s += " (" + m.SubPath + ")"
		}
		out = append(out, s+" ← "+source[m.Name])
	}
	return out
}

// templateOf returns the pod template of p's task in the job as submitted.
func templateOf(job *batch.Job, p *corev1.Pod) *corev1.PodSpec {
	task := p.Annotations[batch.TaskSpecKey]
	for i := range job.Spec.Tasks {
		if job.Spec.Tasks[i].Name == task {
			return &job.Spec.Tasks[i].Template.Spec
		}
	}
	return nil
}

// sortedPods orders r's pods by task, as the job lists them, then by index.
func sortedPods(r *run) []*corev1.Pod {
	order := map[string]int{}
	for i, t := range r.example.job.Spec.Tasks {
		order[t.Name] = i
	}
	pods := make([]*corev1.Pod, 0, len(r.pods))
	for _, p := range r.pods {
		pods = append(pods, p)
	}
	index := func(p *corev1.Pod) int {
		i, _ := strconv.Atoi(p.Name[strings.LastIndex(p.Name, "-")+1:])
		return i
	}
	sort.Slice(pods, func(i, j int) bool {
		ti, tj := order[pods[i].Annotations[batch.TaskSpecKey]], order[pods[j].Annotations[batch.TaskSpecKey]]
		if ti != tj {
			return ti < tj
		}
		if index(pods[i]) != index(pods[j]) {
			return index(pods[i]) < index(pods[j])
		}
		return pods[i].Name < pods[j].Name
	})
	return pods
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
