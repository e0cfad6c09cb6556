{{/*
infra-controller.labels are the labels of every object of this chart.
*/}}
{{- define "infra-controller.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kubevirt-kkp
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/*
infra-controller.selector selects the controller's pods.
*/}}
{{- define "infra-controller.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
infra-controller.rules renders the rules of the generated role of the given
kind ("ClusterRole" or "Role") in the file named by "file"; the generated
files hold one document per kind.
*/}}
{{- define "infra-controller.rules" -}}
{{- $kind := .kind -}}
{{- range $doc := splitList "\n---\n" (.root.Files.Get .file) -}}
{{- $obj := fromYaml $doc -}}
{{- if eq (get $obj "kind") $kind -}}
{{- toYaml (get $obj "rules") -}}
{{- end -}}
{{- end -}}
{{- end }}
