{{/*
The chart's name, the app.kubernetes.io/name label every object carries
and every selector matches (yardmaster).
*/}}
{{- define "yardmaster.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The objects' name: <release>-<name>, or the release name alone when it
contains <name> (`helm install yardmaster`: yardmaster, the kustomize
base's names).
*/}}
{{- define "yardmaster.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "yardmaster.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The labels of every object, and the selector of the Deployment, the
Service, the PodDisruptionBudget and the anti-affinity: the kustomize
base's, nothing of Helm's own, so that the two install the same objects.
*/}}
{{- define "yardmaster.labels" -}}
app.kubernetes.io/name: {{ include "yardmaster.name" . }}
{{- end }}

{{- define "yardmaster.serviceAccountName" -}}
{{- default (include "yardmaster.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/*
The scheduler configuration file: config.file or the chart's
files/config.yaml verbatim, or, with config.profiles or config.override
set, that file parsed, changed and written out again.
*/}}
{{- define "yardmaster.config" -}}
{{- $file := .Values.config.file | default (.Files.Get "files/config.yaml") }}
{{- if or .Values.config.profiles .Values.config.override }}
{{- $c := fromYaml $file }}
{{- if hasKey $c "Error" }}
{{- fail (printf "config.file is not a YAML mapping: %s" $c.Error) }}
{{- end }}
{{- $c = mergeOverwrite $c (deepCopy .Values.config.override) }}
{{- if .Values.config.profiles }}
{{- $_ := set $c "profiles" .Values.config.profiles }}
{{- end }}
{{- toYaml $c | printf "%s\n" }}
{{- else }}
{{- $file }}
{{- end }}
{{- end }}

{{/*
The ConfigMap's name, as kustomize's configMapGenerator makes it:
<name>-config-<hash>, the hash computed as kustomize computes it (its
hasher package): the sha256 of the JSON of {"data", "kind", "name"}, of
which the first 10 hex digits are kept with 0, 1, 3, a and e replaced by g,
h, k, m and t. The name is "" there: kustomize looks it up under a
"metadata/name" key, which finds nothing. A changed configuration is a new
name, so the Deployment's pods roll, as with `kubectl apply -k`; and the
default values give the kustomize base's name (hack/helm's tests compare
them, so a kustomize that hashes otherwise fails there).
*/}}
{{- define "yardmaster.configMapName" -}}
{{- $data := dict "config.yaml" (include "yardmaster.config" .) }}
{{- $hash := dict "kind" "ConfigMap" "name" "" "data" $data | toJson | sha256sum | trunc 10 }}
{{- $hash = $hash | replace "0" "g" | replace "1" "h" | replace "3" "k" | replace "a" "m" | replace "e" "t" }}
{{- printf "%s-config-%s" (include "yardmaster.fullname" .) $hash }}
{{- end }}

{{/*
The Lease yardmaster takes, as JSON {"namespace", "name", "elect"}:
leaderElection of the configuration with yardmaster's defaults
(kube-system; the first profile's schedulerName, itself yardmaster when
unset), so that the Role names the Lease the configuration does.
*/}}
{{- define "yardmaster.lease" -}}
{{- $c := include "yardmaster.config" . | fromYaml }}
{{- if hasKey $c "Error" }}
{{- fail (printf "the scheduler configuration is not a YAML mapping: %s" $c.Error) }}
{{- end }}
{{- $le := $c.leaderElection | default dict }}
{{- $first := "yardmaster" }}
{{- with $c.profiles }}
{{- $first = (first .).schedulerName | default "yardmaster" }}
{{- end }}
{{- $elect := true }}
{{- if hasKey $le "leaderElect" }}
{{- $elect = $le.leaderElect }}
{{- end }}
{{- dict "namespace" ($le.resourceNamespace | default "kube-system") "name" ($le.resourceName | default $first) "elect" $elect | toJson }}
{{- end }}
