{{/*
machine-controller.labels are the labels of every object of this chart.
*/}}
{{- define "machine-controller.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kubevirt-kkp
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/*
machine-controller.selector selects the controller's pods.
*/}}
{{- define "machine-controller.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
machine-controller.rules renders the rules of the generated role of the given
kind ("ClusterRole" or "Role") in the file named by "file"; the generated
files hold one document per kind.
*/}}
{{- define "machine-controller.rules" -}}
{{- $kind := .kind -}}
{{- range $doc := splitList "\n---\n" (.root.Files.Get .file) -}}
{{- $obj := fromYaml $doc -}}
{{- if eq (get $obj "kind") $kind -}}
{{- toYaml (get $obj "rules") -}}
{{- end -}}
{{- end -}}
{{- end }}
