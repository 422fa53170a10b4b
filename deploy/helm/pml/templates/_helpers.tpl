{{- define "pml.name" -}}{{ .Chart.Name }}{{- end -}}
{{- define "pml.fullname" -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- define "pml.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pml.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "pml.labels" -}}
{{ include "pml.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
{{- define "pml.dbSecret" -}}{{ default (printf "%s-db" (include "pml.fullname" .)) .Values.database.existingSecret }}{{- end -}}
{{- define "pml.configSecret" -}}{{ default (printf "%s-config" (include "pml.fullname" .)) .Values.existingConfigSecret }}{{- end -}}
{{- define "pml.hasConfig" -}}{{ if or .Values.config .Values.existingConfigSecret }}true{{ end }}{{- end -}}
