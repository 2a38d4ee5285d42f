{{/*
matchConditions of the two webhooks (package webhook: FrameworksExpression,
SpecChangedExpression): the API server calls them only for Jobs whose
spec.plugins names one of this project's framework plugins, and the validating
one for an UPDATE only when it changes spec. Every other Job is admitted by
Volcano's own job admissions alone, also while vc-webhook-manager cannot
answer ours. installer/manifests_test.go checks the rendered conditions
against package webhook's, which builds them from the registered frameworks.

matchConditions are GA in Kubernetes 1.30 and on by default since 1.28; on
older clusters they are left out (the API server would not know the field).
*/}}
{{- define "framework-plugins.frameworkPlugins" -}}
dask jax mpi mxnet paddle pytorch tensorflow xgboost
{{- end }}

{{/*
The matchConditions member of a webhook; the argument is (list $ <validating>).
*/}}
{{- define "framework-plugins.matchConditions" -}}
{{- $root := index . 0 }}
{{- $validating := index . 1 }}
{{- if semverCompare ">=1.28.0-0" $root.Capabilities.KubeVersion.Version }}
{{- $names := list }}
{{- range splitList " " (include "framework-plugins.frameworkPlugins" $root) }}
{{- $names = append $names (quote .) }}
{{- end }}
matchConditions:
  - name: uses-framework-plugins
    expression: {{ printf "has(object.spec) && type(object.spec) == map && has(object.spec.plugins) && type(object.spec.plugins) == map && [%s].exists(p, p in object.spec.plugins)" (join ", " $names) | quote }}
  {{- if $validating }}
  - name: spec-changed
    expression: {{ "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec" | quote }}
  {{- end }}
{{- end }}
{{- end }}
