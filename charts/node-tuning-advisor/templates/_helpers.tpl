{{/*
The value of `distribution`, checked: empty (the base) or one of the names the generated partial
_distributions.tpl lists (one per overlay in manifests/overlays). Anything else fails the render.
*/}}
{{- define "node-tuning-advisor.distribution" -}}
{{- $supported := splitList " " (include "node-tuning-advisor.distributions" . | trim) -}}
{{- $distribution := .Values.distribution | default "" | toString -}}
{{- if and $distribution (not (has $distribution $supported)) -}}
{{- fail (printf "distribution %q is not supported: set distribution to one of %s, or leave it empty for the base (charts/node-tuning-advisor/values.yaml)" $distribution (join ", " $supported)) -}}
{{- end -}}
{{- $distribution -}}
{{- end -}}

{{/*
The agent's image: repository@digest, else repository:tag, the tag defaulting to the chart's appVersion.
A tag that came as a float (a values file's or --set-json's number: YAML reads tag: 1.10 as 1.1) is
refused, naming image.tag: its text is lost. An integer came from --set, which keeps what was typed.
*/}}
{{- define "node-tuning-advisor.image" -}}
{{- $repository := required "image.repository is required: the node-tuning-advisor image to run (values.yaml)" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repository .Values.image.digest -}}
{{- else -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if kindIs "float64" $tag -}}
{{- fail (printf "image.tag is the number %v, not the text you wrote (YAML reads tag: 1.10 as 1.1): quote it (tag: \"1.10\") or use --set-string image.tag=..." $tag) -}}
{{- end -}}
{{- printf "%s:%s" $repository ($tag | toString) -}}
{{- end -}}
{{- end -}}

{{/*
The labels of the objects of templates/cleanup.yaml (the uninstall's cleanup), which the kustomizations do not have.
*/}}
{{- define "node-tuning-advisor.cleanupLabels" -}}
app.kubernetes.io/component: cleanup
app.kubernetes.io/name: node-tuning-advisor
app.kubernetes.io/part-of: node-tuning-advisor
{{- end -}}
