{{/*
cdi.labels are the labels of every object of this chart.
*/}}
{{- define "cdi.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kubevirt-kkp
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/*
cdi.placement renders a node placement (nodeSelector, tolerations, affinity)
without its empty fields; an empty placement renders as {}.
*/}}
{{- define "cdi.placement" -}}
{{- $placement := dict -}}
{{- range $key, $value := . -}}
{{- if $value }}{{ $_ := set $placement $key $value }}{{ end -}}
{{- end -}}
{{- toYaml $placement -}}
{{- end }}
