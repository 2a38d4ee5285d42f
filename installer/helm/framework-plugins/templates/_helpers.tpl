{{/*
Chart name, truncated to the 63 characters of a label value.
*/}}
{{- define "framework-plugins.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Name prefix of the chart's objects: the release name, or <release>-<chart>
when the release name does not contain the chart name.
*/}}
{{- define "framework-plugins.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "framework-plugins.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "framework-plugins.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: volcano
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Names of the webhook configurations and of their webhooks: Volcano's webhook
manager looks a configuration up as "volcano-admission-service" followed by the
admission's path with "/" replaced by "-" (package webhook: ConfigurationName,
MutateWebhookName, ValidateWebhookName).
*/}}
{{- define "framework-plugins.mutatePath" -}}/jobs/frameworks/mutate{{- end }}
{{- define "framework-plugins.validatePath" -}}/jobs/frameworks/validate{{- end }}
{{- define "framework-plugins.configurationName" -}}
{{- printf "volcano-admission-service%s" (replace "/" "-" .) }}
{{- end }}

{{/*
clientConfig of a webhook; the argument is (list $ <path>): webhook.url plus
the path when the URL is set, else Volcano's admission service.
*/}}
{{- define "framework-plugins.clientConfig" -}}
{{- $root := index . 0 }}
{{- $path := index . 1 }}
{{- with $root.Values.webhook }}
{{- if .url -}}
url: {{ printf "%s%s" (trimSuffix "/" .url) $path | quote }}
{{- else -}}
service:
  name: {{ required "webhook.service.name is required" .service.name }}
  namespace: {{ required "webhook.service.namespace is required" .service.namespace }}
  path: {{ $path }}
  port: {{ .service.port | int }}
{{- end }}
{{- with .caBundle }}
caBundle: {{ . }}
{{- end }}
{{- end }}
{{- end }}

{{/*
namespaceSelector of both webhooks: every namespace but Volcano's and
kube-system (as Volcano's chart does for its own webhooks), and the extra
expressions of webhook.namespaceSelectorExpressions.
*/}}
{{- define "framework-plugins.namespaceSelector" -}}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values:
      {{- if ne .Values.volcano.namespace "kube-system" }}
      - {{ .Values.volcano.namespace }}
      {{- end }}
      - kube-system
  {{- with .Values.webhook.namespaceSelectorExpressions }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/*
Rule matching Volcano Jobs; the argument is the list of operations.
*/}}
{{- define "framework-plugins.jobRule" -}}
- apiGroups:
    - batch.volcano.sh
  apiVersions:
    - v1alpha1
  operations:
    {{- range . }}
    - {{ . }}
    {{- end }}
  resources:
    - jobs
{{- end }}

{{/*
Name of the cert-manager Certificate (certManager.enabled): Volcano's
admission service name plus "-cert".
*/}}
{{- define "framework-plugins.certificateName" -}}
{{ .Values.webhook.service.name }}-cert
{{- end }}

{{/*
namespace/name of that Certificate, for cert-manager's CA injector
(cert-manager.io/inject-ca-from on both webhook configurations).
*/}}
{{- define "framework-plugins.certificateRef" -}}
{{ .Values.webhook.service.namespace }}/{{ include "framework-plugins.certificateName" . }}
{{- end }}

{{/*
The name suffixes of the objects Volcano's controller manager keeps per Job,
by resource, as a CEL map of lists (templates/configmap-policy.yaml):
ConfigMaps of this project's tensorflow and mpi plugins and of Volcano's svc
plugin, the Secret of Volcano's ssh plugin, the Services of Volcano's svc
(<job>) and ray (<job>-head-svc) plugins, the NetworkPolicy of svc (<job>).
*/}}
{{- define "framework-plugins.jobObjectSuffixes" -}}
{"configmaps": ["-tf-cluster", "-mpi-hostfile", "-svc"], "secrets": ["-ssh"], "services": ["", "-head-svc"], "networkpolicies": [""]}
{{- end }}

{{/* Step 0 of docs/install.md: the readiness probe and preStop pause of
Volcano's admission pod, without which its rollout fails Job creates. */}}
{{- define "framework-plugins.admissionReadiness" -}}
kubectl -n {{ .Values.volcano.namespace }} patch deployment volcano-admission --patch-file installer/volcano-patches/volcano-admission-readiness.yaml
  kubectl -n {{ .Values.volcano.namespace }} rollout status deployment volcano-admission
{{- end -}}

{{/*
The helm upgrade of Volcano's release onto this project's images: the chart
version and values file of the Volcano line (volcano.line, default the line
of the chart's appVersion, "<line>-fp.<n>": make chart-package LINE=v1.14.1
packs v1.14.1-fp.<n>). The default line (the vcplugins.io/volcano-version
annotation) has installer/helm/volcano-values.yaml, another lines/<line>/.
*/}}
{{- define "framework-plugins.volcanoUpgrade" -}}
{{- $default := index .Chart.Annotations "vcplugins.io/volcano-version" -}}
{{- $line := .Values.volcano.line | default (regexReplaceAll "-fp\\.[0-9]+$" .Chart.AppVersion "") -}}
{{- $file := "installer/helm/volcano-values.yaml" -}}
{{- if ne $line $default }}{{ $file = printf "lines/%s/volcano-values.yaml" $line }}{{ end -}}
helm upgrade volcano volcano-sh/volcano --version {{ $line | trimPrefix "v" }} -n {{ .Values.volcano.namespace }} --reuse-values -f {{ $file }} --set basic.image_registry=<your registry> --wait
{{- end -}}
