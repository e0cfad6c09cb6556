{{/*
kubevirt.labels are the labels of every object of this chart.
*/}}
{{- define "kubevirt.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kubevirt-kkp
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/*
kubevirt.featureGates is the enabled gate list as YAML: featureGates plus
extraFeatureGates, without duplicates. It fails when a gate is also disabled.
*/}}
{{- define "kubevirt.featureGates" -}}
{{- $gates := concat .Values.featureGates .Values.extraFeatureGates | uniq -}}
{{- range .Values.disabledFeatureGates -}}
{{- if has . $gates -}}
{{- fail (printf "feature gate %s is both enabled and disabled" .) -}}
{{- end -}}
{{- end -}}
{{- toYaml $gates -}}
{{- end }}
