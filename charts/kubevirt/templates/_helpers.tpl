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

{{/*
kubevirt.upstreamObjects renders the objects of a file that test/upstream generates
from the upstream operator's own code (its ServiceAccount, roles and
bindings), with this chart's values on top: the release namespace for the
objects and the binding subjects, the chart's labels, and the image pull
secrets of the ServiceAccount.
*/}}
{{- define "kubevirt.upstreamObjects" -}}
{{- $root := .root -}}
{{- range $doc := splitList "\n---\n" ($root.Files.Get .file) -}}
{{- $obj := fromYaml $doc -}}
{{- if get $obj "kind" -}}
{{- $meta := get $obj "metadata" -}}
{{- if hasKey $meta "namespace" }}{{ $_ := set $meta "namespace" $root.Release.Namespace }}{{ end -}}
{{- $_ := set $meta "labels" (merge (include "kubevirt.labels" $root | fromYaml) (default (dict) (get $meta "labels"))) -}}
{{- range $subject := (default (list) (get $obj "subjects")) }}{{ $_ := set $subject "namespace" $root.Release.Namespace }}{{ end -}}
{{- if and (eq (get $obj "kind") "ServiceAccount") $root.Values.imagePullSecrets -}}
{{- $secrets := list -}}
{{- range $root.Values.imagePullSecrets }}{{ $secrets = append $secrets (dict "name" .) }}{{ end -}}
{{- $_ := set $obj "imagePullSecrets" $secrets -}}
{{- end }}
---
{{ toYaml $obj }}
{{ end -}}
{{- end -}}
{{- end }}
