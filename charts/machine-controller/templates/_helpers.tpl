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
files hold one document per kind and, for Roles, per namespace: "namespace",
when given, picks the Role of that namespace.
*/}}
{{- define "machine-controller.rules" -}}
{{- $kind := .kind -}}
{{- $namespace := .namespace | default "" -}}
{{- range $doc := splitList "\n---\n" (.root.Files.Get .file) -}}
{{- $obj := fromYaml $doc -}}
{{- if and (eq (get $obj "kind") $kind) (or (eq $namespace "") (eq (get (get $obj "metadata") "namespace") $namespace)) -}}
{{- toYaml (get $obj "rules") -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/*
machine-controller.webhookSelector selects the webhook's pods (never the
controller's: the two Deployments and the metrics Service stay apart).
*/}}
{{- define "machine-controller.webhookSelector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}-webhook
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
machine-controller.webhookObjectSelector selects the objects of this
controller: those labelled machine.k8s.io/controller=<controllerName>, or
without the label when controllerName is empty.
*/}}
{{- define "machine-controller.webhookObjectSelector" -}}
matchExpressions:
  {{- if .Values.controllerName }}
  - {key: machine.k8s.io/controller, operator: In, values: [{{ .Values.controllerName | quote }}]}
  {{- else }}
  - {key: machine.k8s.io/controller, operator: DoesNotExist}
  {{- end }}
{{- end }}

{{/*
machine-controller.webhookCommon renders what both webhooks share; it takes
"root" (the chart's context), "exempt" (usernames the webhooks skip) and
"path" (where the webhook serves).
*/}}
{{- define "machine-controller.webhookCommon" -}}
rules:
  - operations: [CREATE, UPDATE]
    apiGroups: [cluster.k8s.io]
    apiVersions: [v1alpha1]
    resources: [machinedeployments, machinesets, machines]
    scope: Namespaced
failurePolicy: {{ .root.Values.webhook.failurePolicy }}
sideEffects: None
admissionReviewVersions: [v1]
timeoutSeconds: {{ .root.Values.webhook.timeoutSeconds }}
objectSelector:
  {{- include "machine-controller.webhookObjectSelector" .root | nindent 2 }}
{{- with .root.Values.webhook.namespaceSelector }}
namespaceSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .exempt }}
# The controller's own writes (finalizers, providerID, Machines of a
# MachineSet whose template was admitted) never wait for the webhook.
matchConditions:
  - name: not-exempt
    expression: '!(request.userInfo.username in {{ toJson . }})'
{{- end }}
clientConfig:
  service:
    name: machine-controller-webhook
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
{{- end }}
