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
files/config.yaml verbatim, or, with config.profiles, config.override,
plugins or pluginConfig set, that file parsed, changed and written out
again. The changes apply in this order, each over the one before:
config.override merged over the file, config.profiles replacing its
profiles, then the plugins and pluginConfig shorthand applied to every
profile (yardmaster.pluginShorthand).
*/}}
{{- define "yardmaster.config" -}}
{{- $file := .Values.config.file | default (.Files.Get "files/config.yaml") }}
{{- $shorthand := or .Values.plugins.enabled .Values.plugins.disabled .Values.pluginConfig }}
{{- if or .Values.config.profiles .Values.config.override $shorthand }}
{{- $c := fromYaml $file }}
{{- if hasKey $c "Error" }}
{{- fail (printf "config.file is not a YAML mapping: %s" $c.Error) }}
{{- end }}
{{- $c = mergeOverwrite $c (deepCopy .Values.config.override) }}
{{- if .Values.config.profiles }}
{{- $_ := set $c "profiles" (deepCopy .Values.config.profiles) }}
{{- end }}
{{- if $shorthand }}
{{- $profiles := list }}
{{- range ($c.profiles | default (list dict)) }}
{{- $p := deepCopy . }}
{{- include "yardmaster.pluginShorthand" (dict "profile" $p "values" $.Values) }}
{{- $profiles = append $profiles $p }}
{{- end }}
{{- $_ := set $c "profiles" $profiles }}
{{- end }}
{{- toYaml $c | printf "%s\n" }}
{{- else }}
{{- $file }}
{{- end }}
{{- end }}

{{/*
Applies the shorthand of values.yaml to .profile, a profile's mapping,
in place (through a dict, not include's text: a JSON round trip would
turn a large integer argument into a float yardmaster refuses), and
outputs nothing:
plugins.enabled appended to plugins.multiPoint.enabled, plugins.disabled
to plugins.multiPoint.disabled, and pluginConfig's entries to
pluginConfig. A plugin the shorthand names replaces the profile's own
entries for it: an enabled plugin is taken off multiPoint.disabled (and
its earlier multiPoint.enabled entry, weight and all, is dropped), a
disabled one off multiPoint.enabled, and a pluginConfig entry replaces the
profile's entry of that name, args whole (not merged). Extension points
other than multiPoint are left as they are. An entry of plugins.enabled or
plugins.disabled is a name or {name, weight}.
*/}}
{{- define "yardmaster.pluginShorthand" -}}
{{- $p := .profile }}
{{- $enable := list }}
{{- range .values.plugins.enabled }}
{{- $enable = append $enable (kindIs "string" . | ternary (dict "name" .) .) }}
{{- end }}
{{- $disable := list }}
{{- range .values.plugins.disabled }}
{{- $disable = append $disable (kindIs "string" . | ternary (dict "name" .) .) }}
{{- end }}
{{- $named := list }}
{{- range (concat $enable $disable) }}
{{- $named = append $named .name }}
{{- end }}
{{- $plugins := $p.plugins | default dict }}
{{- $mp := $plugins.multiPoint | default dict }}
{{- $keptEnabled := list }}
{{- range ($mp.enabled | default list) }}
{{- if not (has .name $named) }}
{{- $keptEnabled = append $keptEnabled . }}
{{- end }}
{{- end }}
{{- $keptDisabled := list }}
{{- range ($mp.disabled | default list) }}
{{- if not (has .name $named) }}
{{- $keptDisabled = append $keptDisabled . }}
{{- end }}
{{- end }}
{{- with (concat $keptEnabled $enable) }}
{{- $_ := set $mp "enabled" . }}
{{- else }}
{{- $_ := unset $mp "enabled" }}
{{- end }}
{{- with (concat $keptDisabled $disable) }}
{{- $_ := set $mp "disabled" . }}
{{- else }}
{{- $_ := unset $mp "disabled" }}
{{- end }}
{{- if $mp }}
{{- $_ := set $plugins "multiPoint" $mp }}
{{- end }}
{{- if $plugins }}
{{- $_ := set $p "plugins" $plugins }}
{{- end }}
{{- with .values.pluginConfig }}
{{- $names := list }}
{{- range . }}
{{- $names = append $names .name }}
{{- end }}
{{- $kept := list }}
{{- range ($p.pluginConfig | default list) }}
{{- if not (has .name $names) }}
{{- $kept = append $kept . }}
{{- end }}
{{- end }}
{{- $_ := set $p "pluginConfig" (concat $kept (deepCopy .)) }}
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
